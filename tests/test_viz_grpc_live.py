"""Chapter 11's table of the live Proxy recording (``viz.grpc.live_proxy_frame``): its counts
add up, and the Proxy's own selection explains every stored message of the shipped recording."""

from __future__ import annotations

from rocketlb_core import data_path
from rocketlb_core.viz.grpc import live_proxy_frame


def test_the_live_proxy_table_adds_up() -> None:
    frame = live_proxy_frame(data_path("live", "grpc", "grpc-producer-outage-5"))
    for name in frame.columns:
        c = frame[name]
        assert c["stored"] + c["failed"] == c["sends"]
        assert c["receipt names the storing broker"] + c["receipt names another broker"] \
            == c["stored"]
        assert c["Proxy model agrees"] + c["Proxy counter inferred"] \
            + c["Proxy model unexplained"] == c["sends"]
        assert c["Proxy model unexplained"] == 0
        # the client's choice is not where the Proxy stores: about half the receipts name
        # the other of two brokers (cluster mode: fact proxy.send-selects-its-own-queue)
        assert c["receipt names another broker"] > c["stored"] // 4


def test_the_live_clients_table_has_every_client_and_each_agrees() -> None:
    """Chapter 11's table of the gRPC clients checked live (``viz.grpc.live_clients_frame``):
    a row for every client and group of the shipped recordings, a column per line, and in each
    cell every checked item agrees; a recording with one receipt moved shows it unexplained."""
    import gzip
    import json
    import shutil
    import tempfile
    from pathlib import Path

    from rocketlb_core.viz.grpc import live_clients_frame

    grpc = data_path("live", "grpc")
    names = ("grpc-clients", "grpc-python-producer-outage")
    frame = live_clients_frame({"5.3.3": [grpc / f"{n}-5" for n in names],
                                "5.5.0": [grpc / f"{n}-5.5" for n in names]})
    assert list(frame.columns) == ["5.3.3", "5.5.0"]
    clients = [c for c, _ in frame.index]
    assert {"g1 (Java producer)", "py1 (Python producer)", "s1 (simple consumer)",
            "s2 (simple consumer)", "p1 (push consumer)", "p2 (push consumer)",
            "GID_push (group)", "GID_simple (group)"} == set(clients)
    for cell in frame.to_numpy().ravel():
        agree, checked = (int(x) for x in cell.split("\u00a0/\u00a0"))
        assert 0 < agree == checked, cell

    with tempfile.TemporaryDirectory() as tmp:
        moved = Path(tmp) / "moved"
        shutil.copytree(grpc / "grpc-python-producer-outage-5", moved)
        path = moved / "sends" / "py1.jsonl.gz"
        rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
        rows[100]["client_queue"] = (rows[100]["client_queue"] + 2) % 4
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
        bad = live_clients_frame({"x": [moved]})
        assert "unexplained" in bad.loc[("py1 (Python producer)",
                                         "receipt's queue is the client model's"), "x"]


def test_the_isolation_behind_a_cluster_mode_proxy_ends_while_the_broker_is_paused() -> None:
    """Chapter 11's isolation table (``viz.grpc.live_isolation_frame``): behind one cluster-mode
    Proxy the Java client's log shows it rejoining the Proxy's endpoints while broker-a is still
    paused (the Proxy answers the heartbeat: fact proxy.heartbeat-answered-by-proxy), and the
    events come in time order between the pause and the resume."""
    from rocketlb_core.viz.grpc import live_isolation_frame

    frame = live_isolation_frame(data_path("live", "grpc", "grpc-producer-outage-5"))
    assert list(frame["s"]) == sorted(frame["s"])
    pause = float(frame.loc[frame["event"] == "broker-a paused", "s"].iloc[0])
    resume = float(frame.loc[frame["event"] == "broker-a resumed", "s"].iloc[0])
    rejoins = frame[frame["event"].str.contains("rejoins")]
    paused = rejoins[rejoins["paused"] == "broker-a"]
    assert len(paused) >= 2
    assert all(pause < s < resume for s in paused["s"])
    assert set(rejoins["paused"]) <= {"broker-a", "none"}


def test_the_retried_sends_show_the_proxy_choosing_each_attempt() -> None:
    """Chapter 11's retry table (``viz.grpc.live_retries_frame``): every send of the shipped
    recording that took more than one attempt, attempt by attempt, numbered from 1; the send
    that failed spent every attempt on the paused broker-a, and a retried send that worked
    ended on broker-b while its receipt names a queue of broker-a (the client's choice)."""
    from rocketlb_core.viz.grpc import live_retries_frame

    frame = live_retries_frame(data_path("live", "grpc", "grpc-producer-outage-5"))
    for _, f in frame.groupby("send"):
        assert list(f["attempt"]) == list(range(1, len(f) + 1))
        assert len(f) > 1
    failed = frame[frame["receipt"] == "none: the send failed"]
    assert len(failed) == 3
    assert all(q.startswith("broker-a/") for q in failed["Proxy's queue"])
    worked = frame[(frame["outcome"] == "ok")]
    assert any(q.startswith("broker-b/") and r.startswith("broker-a/")
               for q, r in zip(worked["Proxy's queue"], worked["receipt"], strict=True))
