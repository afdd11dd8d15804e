"""Capturing what ``mqadmin`` prints about a misbehaving cluster, for ``rocketlb doctor``
(issue 35): real outputs of upstream's admin tool, in both lines' formats, with the problems
the doctor looks for injected on purpose.

    python -m rocketlb_core.live.capture --line 4 --out data/live/doctor/capture-4 --isolated
    python -m rocketlb_core.live.capture --line 4 --groups GID_strat,GID_tags \
        --out data/live/doctor/strategies-4 --isolated

One cluster of the line (a name server, ``broker-a`` and ``broker-b``), the topics the groups
use (``TopicDoc``: 2 queues per broker, 4 in all; ``TopicSmall``: 1 per broker, 2 in all), a
producer that sends 40 messages to ``TopicDoc``, and the consumer groups ``--groups`` names
(default: the first four, ``DEFAULT_GROUPS``, what ``capture-<line>`` holds) of upstream's
``DefaultMQPushConsumer`` (``live/java/Consume.java``; strategy AVG and subscription ``*``
unless said):

* ``GID_dup``: ``dup-1`` and ``dup-2`` both with instanceName ``dup`` (one client id for two
  processes: the duplicate client id trap) and ``other``, on ``TopicDoc``;
* ``GID_idle``: three consumers on ``TopicSmall``'s two queues (one idle member);
* ``GID_mixed``: ``mx-doc`` subscribes ``TopicDoc``, ``mx-small`` ``TopicSmall`` (one group,
  two different subscriptions);
* ``GID_clean``: two consumers on ``TopicDoc``: nothing wrong (the doctor must find nothing);
* ``GID_strat``: ``st-avg`` allocates ``TopicDoc`` with AVG, ``st-circle`` with AVG_BY_CIRCLE
  (mixed strategies: each computes its own share with its own strategy);
* ``GID_tags``: ``tg-a`` subscribes ``TopicDoc`` with tag ``TagA``, ``tg-b`` with ``TagB`` (one
  group, one topic, two tag expressions).

Once the group has settled (a rebalance every 20 s), it runs ``clusterList``, ``topicRoute -t``
for each topic, ``brokerStatus -b`` for each broker, and per group ``consumerConnection -g``,
``consumerProgress -g`` and ``consumerProgress -g ... -s true`` (the client per queue), and
writes each output untouched to ``<out>/<name>.txt`` (``--outputs`` takes a subset:
``OUTPUTS``) (``.txt.gz`` on line 5, ``GZIP_LINES``:
5.3.3's ``mqadmin`` prints about 225 lines of logback status before each output), every
consumer's ``rocketmq_client.log`` (gzip; it runs on past the outputs, to the consumers' clean
shutdown one after the other, so its last assignments are those of the shutdown) to
``<out>/logs/<name>/``, and ``provenance.json``: the line, RocketMQ's versions, the exact
command of every file, the date, what was injected. The folder is written whole or not at all
(``rocketlb_core.atomic``). Every process it starts is stopped, by pid, before it returns.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.errors import InputError
from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LINES, ROLES, LiveError, line, resolve
from rocketlb_core.live.record import _gzip_copy, _gzip_text

TOPICS = {"TopicDoc": 2, "TopicSmall": 1}          # queues per broker
CONSUMERS = (                   # (name, group, instance, topic, strategy, subscription)
    ("dup-1", "GID_dup", "dup", "TopicDoc", "AVG", "*"),
    ("dup-2", "GID_dup", "dup", "TopicDoc", "AVG", "*"),
    ("other", "GID_dup", "other", "TopicDoc", "AVG", "*"),
    ("idle-1", "GID_idle", "idle-1", "TopicSmall", "AVG", "*"),
    ("idle-2", "GID_idle", "idle-2", "TopicSmall", "AVG", "*"),
    ("idle-3", "GID_idle", "idle-3", "TopicSmall", "AVG", "*"),
    ("mx-doc", "GID_mixed", "mx-doc", "TopicDoc", "AVG", "*"),
    ("mx-small", "GID_mixed", "mx-small", "TopicSmall", "AVG", "*"),
    ("clean-1", "GID_clean", "clean-1", "TopicDoc", "AVG", "*"),
    ("clean-2", "GID_clean", "clean-2", "TopicDoc", "AVG", "*"),
    ("st-avg", "GID_strat", "st-avg", "TopicDoc", "AVG", "*"),
    ("st-circle", "GID_strat", "st-circle", "TopicDoc", "AVG_BY_CIRCLE", "*"),
    ("tg-a", "GID_tags", "tg-a", "TopicDoc", "AVG", "TagA"),
    ("tg-b", "GID_tags", "tg-b", "TopicDoc", "AVG", "TagB"),
)
INJECTED = {
    "GID_dup": "dup-1 and dup-2 share instanceName 'dup' (one client id, two processes)",
    "GID_idle": "three consumers on TopicSmall's two queues",
    "GID_mixed": "mx-doc subscribes TopicDoc, mx-small subscribes TopicSmall",
    "GID_clean": "nothing: two consumers on TopicDoc's four queues",
    "GID_strat": "st-avg allocates TopicDoc with AVG, st-circle with AVG_BY_CIRCLE",
    "GID_tags": "tg-a subscribes TopicDoc with tag TagA, tg-b with tag TagB",
}
DEFAULT_GROUPS = ("GID_dup", "GID_idle", "GID_mixed", "GID_clean")
SETTLE_S = 25.0
ATTEMPTS = 3                                        # to start a consumer
CLIENT_OPTIONS = "-Dcom.rocketmq.remoting.client.connect.timeout=15000"
MESSAGES = 40
GZIP_LINES = {"5"}             # outputs gzipped: 5.x's mqadmin prints logback's status first


def _say(msg: str) -> None:
    print(f"[capture] {msg}", file=sys.stderr, flush=True)


def keep_output(tmp: Path, name: str, text: str, line_name: str) -> str:
    """Write what ``mqadmin`` printed into the capture being written (``tmp``) as
    ``<name>.txt``, gzipped as ``<name>.txt.gz`` on the lines of ``GZIP_LINES``, and return the
    file's name as written: the one ``provenance.json`` records. The folder's marker
    (``.rocketlb-output.json``) lists what ``tmp`` holds when the capture is complete
    (``atomic.write_marker``), so it names the same file; a file must never be renamed or
    compressed after it is kept (capture-5's first marker listed ``.txt`` names for files
    gzipped afterwards, outside the writer)."""
    file = f"{name}.txt"
    if line_name in GZIP_LINES:
        file += ".gz"
        _gzip_text(tmp / file, text)
    else:
        (tmp / file).write_text(text, encoding="utf-8")
    return file


def _admin(c: live.Cluster, files: list[dict[str, Any]], tmp: Path, name: str,
           *args: str) -> None:
    """Run ``mqadmin args`` and keep what it printed (``keep_output``; a refusal too: what
    mqadmin prints then is also a real output)."""
    started = time.time()
    try:
        text, status = live.admin(c, *args), 0
    except LiveError as exc:
        text, status = str(exc), 1
    file = keep_output(tmp, name, text, c.line)
    files.append({"file": file, "command": "mqadmin " + " ".join(args)
                  + f" -n {c.namesrv_addr}", "ok": status == 0,
                  "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))})


OUTPUTS = ("clusterList", "topicRoute", "brokerStatus", "consumerConnection",
           "consumerProgress", "consumerProgress-s")
"""What a capture runs (``--outputs``; all by default): ``mqadmin clusterList``, ``topicRoute
-t`` per topic, ``brokerStatus -b`` per broker, and per group ``consumerConnection -g``,
``consumerProgress -g`` and ``consumerProgress -g ... -s true``. Each 5.x ``mqadmin`` call is a
JVM that takes 5 to 18 s; CI's live check takes only what its finding needs."""


def outputs_arg(text: str) -> tuple[str, ...]:
    """``--outputs A,B``: known outputs, each once, in ``OUTPUTS``' order."""
    given = {o.strip() for o in text.split(",") if o.strip()}
    unknown = sorted(given - set(OUTPUTS))
    if unknown or not given:
        raise argparse.ArgumentTypeError(
            f"unknown output(s) {', '.join(unknown) or '(none given)'}; known: "
            f"{', '.join(OUTPUTS)}")
    return tuple(o for o in OUTPUTS if o in given)


def groups_arg(text: str) -> tuple[str, ...]:
    """``--groups G1,G2``: known groups, in the order given, each once."""
    groups = tuple(dict.fromkeys(g.strip() for g in text.split(",") if g.strip()))
    unknown = [g for g in groups if g not in INJECTED]
    if unknown or not groups:
        raise argparse.ArgumentTypeError(
            f"unknown group(s) {', '.join(unknown) or '(none given)'}; known: "
            f"{', '.join(INJECTED)}")
    return groups


def capture(line_name: str, out: Path, *, force: bool = False,
            groups: tuple[str, ...] = DEFAULT_GROUPS,
            outputs: tuple[str, ...] = OUTPUTS) -> dict[str, Any]:
    """Run the capture (module docstring) of ``groups`` on a fresh cluster and write ``out``,
    taking the ``mqadmin`` ``outputs`` (``OUTPUTS``)."""
    spec = line(line_name)
    chosen = [k for k in CONSUMERS if k[1] in groups]
    topics = {t: q for t, q in TOPICS.items() if any(k[3] == t for k in chosen)}
    topics.setdefault("TopicDoc", TOPICS["TopicDoc"])       # the producer's
    scratch = Path(tempfile.mkdtemp(prefix="rocketlb-capture-"))
    home = scratch / "cluster"
    consumers: list[live.Consumer] = []
    try:
        with atomic_folder(out, "live capture", inputs=[], force=force) as tmp:
            _say(f"starting a {line_name}.x cluster")
            c = live.up(home, line_name, 2, trace_brokers=0)
            for topic, queues in topics.items():
                live.create_topic(c, topic, queues)
                live.topic_route(c, topic, brokers=2, wait_s=60)
            # on a loaded machine a client's start fails now and then ("send request to
            # <namesrv> failed", 5.x mostly): the clients started from here on (not the
            # servers) get a longer connect timeout, and each start is retried (ATTEMPTS); it
            # changes nothing about balancing, and provenance.json records it
            os.environ["JAVA_TOOL_OPTIONS"] = CLIENT_OPTIONS
            producer = live.start_producer(c, "TopicDoc", MESSAGES, group="PG_doc",
                                           instance="p-doc", go=True)
            for name, group, instance, topic, strategy, sub in chosen:
                for attempt in range(1, ATTEMPTS + 1):
                    try:
                        k = live.start_consumer(c, topic, group, instance, name,
                                                strategy=strategy, subscription=sub)
                    except LiveError as exc:       # a loaded machine: a 3 s call timed out
                        if attempt == ATTEMPTS:
                            raise
                        _say(f"{name} did not start ({str(exc)[:200]}); again")
                        continue
                    consumers.append(k)
                    if k.start_error is None:
                        break
                    # start() threw (a route lookup timed out): 5.x shuts the consumer down
                    # then, so the group would miss a member; stop it and start it again
                    live.stop_consumer(k)
                    consumers.remove(k)
                    if attempt == ATTEMPTS:
                        raise LiveError(f"{name}: start() threw {ATTEMPTS} times, last: "
                                        f"{k.start_error[:300]}")
                    _say(f"{name}: start() threw ({k.start_error[:200]}); again")
                _say(f"{name} started ({group}, instanceName {instance}, {topic} {sub!r}, "
                     f"{strategy})")
            live.collect_sends(producer, timeout_s=120)
            _say(f"settling {SETTLE_S:.0f} s")
            time.sleep(SETTLE_S)
            files: list[dict[str, Any]] = []
            if "clusterList" in outputs:
                _admin(c, files, tmp, "clusterList", "clusterList")
            for topic in topics if "topicRoute" in outputs else ():
                _admin(c, files, tmp, f"topicRoute-{topic}", "topicRoute", "-t", topic)
            for b in c.brokers() if "brokerStatus" in outputs else ():
                _admin(c, files, tmp, f"brokerStatus-{b.name}", "brokerStatus",
                       "-b", f"127.0.0.1:{b.port}")
            for group in groups:
                if "consumerConnection" in outputs:
                    _admin(c, files, tmp, f"consumerConnection-{group}",
                           "consumerConnection", "-g", group)
                if "consumerProgress" in outputs:
                    _admin(c, files, tmp, f"consumerProgress-{group}", "consumerProgress",
                           "-g", group)
                if "consumerProgress-s" in outputs:
                    _admin(c, files, tmp, f"consumerProgress-s-{group}", "consumerProgress",
                           "-g", group, "-s", "true")
            _say(f"{len(files)} outputs captured")
            for k in consumers:
                if k.process.poll() is None:
                    live.stop_consumer(k)
            for k in consumers:
                if k.client_log.is_file() and k.client_log.stat().st_size:
                    _gzip_copy(k.client_log, tmp / "logs" / k.name / "rocketmq_client.log.gz")
            meta = {
                "format": "rocketlb-mqadmin-capture", "version": 1, "line": line_name,
                "server_version": spec.server_version, "client_version": spec.client_version,
                "mqadmin": f"rocketmq-tools {spec.server_version} (MQAdminStartup)",
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "isolated": bool(os.environ.get(live.ENV_ISOLATED)),
                "topics": {t: {"queues_per_broker": q, "brokers": ["broker-a", "broker-b"]}
                           for t, q in topics.items()},
                "brokers": [{"name": p.name, "address": f"127.0.0.1:{p.port}"}
                            for p in c.brokers()],
                "consumers": [{"name": n, "group": g, "instance": i, "topic": t,
                               "client_id": f"127.0.0.1@{i}", "strategy": st,
                               "subscription": sub}
                              for n, g, i, t, st, sub in chosen],
                "producer": {"group": "PG_doc", "topic": "TopicDoc", "messages": MESSAGES},
                "injected": {g: INJECTED[g] for g in groups}, "settle_s": SETTLE_S, "files": files,
                "client_jvm_options": CLIENT_OPTIONS,
                "command": f"python -m rocketlb_core.live.capture --line {line_name} "
                           + ("" if groups == DEFAULT_GROUPS else f"--groups {','.join(groups)} ")
                           + ("" if outputs == OUTPUTS else f"--outputs {','.join(outputs)} ")
                           + f"--out {out} --isolated",
            }
            (tmp / "provenance.json").write_text(json.dumps(meta, indent=1) + "\n",
                                                 encoding="utf-8")
        return meta
    finally:
        for k in consumers:                      # by pid (Popen), whatever happened
            live.kill_consumer(k)
        if (home / live.STATE).is_file():
            live.down(home)                     # the cluster's recorded pids, marker-checked
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.live.capture",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--line", choices=sorted(LINES), default="5")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--groups", type=groups_arg, default=DEFAULT_GROUPS,
                    help=f"the groups to capture, comma-separated (default "
                         f"{','.join(DEFAULT_GROUPS)}; known: {','.join(INJECTED)})")
    ap.add_argument("--outputs", type=outputs_arg, default=OUTPUTS,
                    help=f"the mqadmin outputs to take, comma-separated (default all: "
                         f"{','.join(OUTPUTS)})")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--isolated", action="store_true",
                    help="run the cluster in a private network namespace (Linux unshare)")
    args = ap.parse_args(argv)
    try:
        if args.isolated and not os.environ.get(live.ENV_ISOLATED):
            for role in ROLES:                      # no network inside the namespace
                resolve(args.line, role)
            argv_in = [sys.executable, "-m", "rocketlb_core.live.capture", "--line", args.line,
                       "--groups", ",".join(args.groups), "--outputs", ",".join(args.outputs),
                       "--out", str(args.out), "--isolated"]
            return live.run_isolated(argv_in + (["--force"] if args.force else []),
                                     check=False).returncode
        meta = capture(args.line, args.out, force=args.force, groups=args.groups,
                       outputs=args.outputs)
        print(json.dumps({"capture": str(args.out), "files": len(meta["files"])}))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except subprocess.TimeoutExpired as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
