"""The doctor at scale (issue 44, item 3): ``rocketlb doctor`` on large inputs of each kind, at
1x and 10x, time and peak memory, against reading the same bytes in the same run.

Each input kind is written by a generator below in the formats the doctor reads (the shipped
captures' lines: ``data/live/doctor/``), and run in a child process of its own (peak RSS is
the child's ``VmHWM``, its peak since its exec); the baseline child reads the same files whole
and splits their lines. The doctor's cost must grow linearly with its input: the 10x/1x ratio
of each kind's time is printed beside the input's own 10x, and its memory above reading.

* ``churn``: one group's broker log of join/leave lines, 100 consumers cycling (a busy day's
  rebalances): 10,000 events at 1x;
* ``groups``: a broker log of one join in each of 4,000 groups at 1x;
* ``route``: a ``topicRoute`` of 200 brokers at 1x;
* ``dup-connections``: a ``consumerConnection`` of 10,000 connections of one client id at 1x;
* ``progress``: a ``consumerProgress`` of 10,000 queues at 1x.

``.venv/bin/python bench/doctor.py [--scale 1 10] [--kinds ...]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = "2026-11-24 09:{m:02d}:{s:02d}"
CH = ("ClientChannelInfo [channel=[id: 0x{ch:08x}, L:/127.0.0.1:20911 - R:/127.0.0.1:{port}], "
      "clientId=127.0.0.1@{cid}, language=JAVA, version=479, lastUpdateTimestamp=1795484645948]")


def _stamp(i: int) -> str:
    return STAMP.format(m=(i // 60) % 60, s=i % 60)


def churn(folder: Path, k: int) -> None:
    lines = []
    for i in range(10_000 * k):
        c = i % 100
        ch = CH.format(ch=i // 200 * 100 + c, port=40000 + c, cid=f"c{c}")
        if (i // 100) % 2 == 0:
            lines.append(f"{_stamp(i // 20)} INFO HeartbeatThread_1 - new consumer connected, "
                         f"group: GID_churn CONSUME_PASSIVELY CLUSTERING channel: {ch}")
        else:
            lines.append(f"{_stamp(i // 20)} INFO ClientManageThread_1 - unregister a consumer"
                         f"[GID_churn] from consumerGroupInfo {ch}")
    (folder / "broker.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _topic_of(folder, "GID_churn")


def _topic_of(folder: Path, group: str) -> None:
    """The shipped capture's route of TopicDoc and a consumerProgress naming ``group`` on it,
    so the doctor checks the group's every state against the topic's queues."""
    capture = ROOT / "data/live/doctor/capture-4"
    (folder / "topicRoute-TopicDoc.txt").write_text(
        (capture / "topicRoute-TopicDoc.txt").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / f"consumerProgress-s-{group}.txt").write_text(
        (capture / "consumerProgress-s-GID_clean.txt").read_text(encoding="utf-8")
        .replace("GID_clean", group), encoding="utf-8")


def groups(folder: Path, k: int) -> None:
    lines = [f"{_stamp(i // 100)} INFO HeartbeatThread_1 - new consumer connected, group: "
             f"GID_{i} CONSUME_PASSIVELY CLUSTERING channel: "
             + CH.format(ch=i, port=40000 + i % 20000, cid=f"c{i}")
             for i in range(4_000 * k)]
    (folder / "broker.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def route(folder: Path, k: int) -> None:
    n = 200 * k
    bds = ",\n".join(f'\t\t{{\n\t\t\t"brokerAddrs":{{0:"10.0.{i // 250}.{i % 250}:10911"\n\t\t\t}},'
                     f'\n\t\t\t"brokerName":"broker-{i}",\n\t\t\t"cluster":"c"\n\t\t}}'
                     for i in range(n))
    qds = ",\n".join(f'\t\t{{\n\t\t\t"brokerName":"broker-{i}",\n\t\t\t"perm":6,\n\t\t\t'
                     f'"readQueueNums":8,\n\t\t\t"topicSysFlag":0,\n\t\t\t"writeQueueNums":8\n'
                     f'\t\t}}' for i in range(n))
    text = (f'{{\n\t"brokerDatas":[\n{bds}\n\t],\n\t"filterServerTable":{{}},\n'
            f'\t"queueDatas":[\n{qds}\n\t]\n}}\n')
    (folder / "topicRoute-TopicBig.txt").write_text(text, encoding="utf-8")


def dup_connections(folder: Path, k: int) -> None:
    rows = ["#ClientId                            #ClientAddr            #Language  #Version"]
    rows += [f"127.0.0.1@dup                        127.0.0.1:{10000 + i % 50000:<14} "
             "JAVA       V4_9_8" for i in range(10_000 * k)]
    rows += ["", "Below is subscription:", "#Topic               #SubExpression",
             "TopicDoc             *", "%RETRY%GID_dup       *", "",
             "ConsumeType: CONSUME_PASSIVELY", "MessageModel: CLUSTERING",
             "ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET"]
    (folder / "consumerConnection-GID_dup.txt").write_text("\n".join(rows) + "\n",
                                                          encoding="utf-8")


def progress(folder: Path, k: int) -> None:
    sample = (ROOT / "data/live/doctor/capture-4/consumerProgress-s-GID_clean.txt").read_text(
        encoding="utf-8").splitlines()
    head = [ln for ln in sample if ln.startswith("#")][:1]
    row = next(ln for ln in sample if "TopicDoc" in ln and not ln.startswith("#"))
    parts = row.split()
    rows = []
    for i in range(10_000 * k):
        p = list(parts)
        p[1] = f"broker-{i // 8}"
        p[2] = str(i % 8)
        rows.append("  ".join(p))
    tail = [ln for ln in sample if ln.startswith(("Consume TPS", "Diff Total"))]
    (folder / "consumerProgress-s-GID_big.txt").write_text(
        "\n".join(head + rows + [""] + tail) + "\n", encoding="utf-8")


KINDS = {"churn": churn, "groups": groups, "route": route, "dup-connections": dup_connections,
         "progress": progress}

CHILD = """
import sys, time, io, contextlib
from pathlib import Path
folder = Path(sys.argv[1]); mode = sys.argv[2]
t0 = time.perf_counter()
if mode == "doctor":
    from rocketlb_core.commands import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            status = main(["doctor", str(folder), "--json"])
        except SystemExit as exc:
            status = exc.code
else:
    status = 0
    for p in sorted(folder.iterdir()):
        status += len(p.read_bytes().splitlines())
    status = 0
hwm = next(int(line.split()[1]) for line in open("/proc/self/status")
           if line.startswith("VmHWM:"))          # this process's peak since its exec, KiB
print(time.perf_counter() - t0, hwm, status)
"""


def measure(folder: Path, mode: str, timeout: int) -> tuple[float, int, object]:
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(folder), mode],
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return float("inf"), 0, "timeout"
    if done.returncode != 0:
        return float("nan"), 0, done.stderr.strip().splitlines()[-1:]
    t, rss, status = done.stdout.split()
    return float(t), int(rss) // 1024, status          # seconds, MiB


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args(argv)
    rows = []
    for kind in args.kinds:
        for k in args.scale:
            with tempfile.TemporaryDirectory(prefix="rocketlb-bench-doctor-") as tmp:
                folder = Path(tmp)
                KINDS[kind](folder, k)
                size = sum(p.stat().st_size for p in folder.iterdir())
                base_t, base_m, _ = measure(folder, "read", args.timeout)
                t, m, status = measure(folder, "doctor", args.timeout)
                rows.append({"kind": kind, "scale": k, "bytes": size, "doctor_s": round(t, 3),
                             "doctor_mib": m, "read_s": round(base_t, 3), "read_mib": base_m,
                             "exit": status})
                print(f"{kind:16} x{k:<3} {size / 2**20:7.2f} MiB  doctor {t:8.2f} s "
                      f"{m:6d} MiB  (reading the bytes {base_t:6.2f} s {base_m:5d} MiB)  "
                      f"exit {status}", file=sys.stderr, flush=True)
    by = {(r["kind"], r["scale"]): r for r in rows}
    for kind in args.kinds:
        lo, hi = min(args.scale), max(args.scale)
        if (kind, lo) in by and (kind, hi) in by and lo != hi:
            a, b = by[(kind, lo)], by[(kind, hi)]
            print(f"{kind:16} x{hi}/x{lo}: input {b['bytes'] / a['bytes']:.1f}x, time "
                  f"{b['doctor_s'] / max(a['doctor_s'], 1e-9):.1f}x, memory above reading "
                  f"{(b['doctor_mib'] - b['read_mib'])}"
                  f" / {(a['doctor_mib'] - a['read_mib'])} MiB",
                  file=sys.stderr)
    print(json.dumps({"rows": rows, "maxrss_parent_mib":
                      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
