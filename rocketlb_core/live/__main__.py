"""``python -m rocketlb_core.live``: a local RocketMQ cluster from upstream's released jars.

    python -m rocketlb_core.live jars   [--line 5]            # resolve (and cache) the jars
    python -m rocketlb_core.live up     [--line 5] [--brokers 2] [--home DIR]
                                        [--namesrv-port 19876] [--broker-port 20911]
    python -m rocketlb_core.live status [--home DIR]
    python -m rocketlb_core.live admin  [--home DIR] -- clusterList   # upstream's mqadmin
    python -m rocketlb_core.live down   [--home DIR]
    python -m rocketlb_core.live record SCENARIO --line 4 --out DIR [--isolated] [--force]
                                        [--strict]
                                        # a live scenario (data/scenarios/live/), recorded;
                                        # --strict: fail if an event starts over 1 s late
    python -m rocketlb_core.live generate --seed S [--line 4|5] [--out FILE]
                                        # a random live scenario from a seed (TOML)
    python -m rocketlb_core.live check RECORDING [--json]
                                        # the model against a recording (live/check.py)

Exit status: 0 done, 2 refused (Java or Maven missing, a port taken, a cluster already running
in that home, nothing started there, a recording that cannot be read), 3 a check that found
something the model does not explain, 1 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rocketlb_core.cli import Terminated, terminate_cleanly
from rocketlb_core.errors import InputError
from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LINES, ROLES, LiveError, cache_root, resolve
from rocketlb_core.numbers import INT64_MAX, int_option


def _default_home() -> Path:
    return cache_root().parent / "live"


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m rocketlb_core.live``, built without running anything (the
    book's command reference, ``rocketlb_core.docs_cli``, prints its help)."""
    parser = argparse.ArgumentParser(prog="python -m rocketlb_core.live",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    jars = sub.add_parser("jars", help="resolve RocketMQ's jars through Maven")
    jars.add_argument("--line", choices=sorted(LINES), default="5")
    start = sub.add_parser("up", help="start a name server and brokers on 127.0.0.1")
    start.add_argument("--line", choices=sorted(LINES), default="5")
    start.add_argument("--brokers", type=int_option(1, 64), default=2)
    start.add_argument("--namesrv-port", type=int_option(1, 65535), default=19876)
    start.add_argument("--broker-port", type=int_option(1, 65535), default=20911)
    start.add_argument("--broker-heap-mb", type=int_option(64, 65536), default=256)
    for name in ("up", "down", "status", "admin"):
        p = start if name == "up" else sub.choices.get(name) or sub.add_parser(name)
        p.add_argument("--home", type=Path, default=_default_home(),
                       help="the cluster's folder (default: .cache/live in the checkout)")
    sub.choices["admin"].add_argument("args", nargs=argparse.REMAINDER)
    rec = sub.add_parser("record", help="run a live scenario on a fresh cluster and record it")
    rec.add_argument("scenario", type=Path, help="a live scenario (data/scenarios/live/*.toml)")
    rec.add_argument("--line", choices=sorted(LINES), default="5")
    rec.add_argument("--out", type=Path, required=True, help="the recording's folder")
    rec.add_argument("--force", action="store_true",
                     help="replace a folder rocketlb did not write")
    rec.add_argument("--strict", action="store_true",
                     help="fail (nothing written) when an event starts more than MAX_LATE_MS "
                          "(1 s) after its planned time; without it, a warning")
    rec.add_argument("--isolated", action="store_true",
                     help="run the cluster in a private network namespace (Linux unshare): "
                          "nothing of it is reachable from outside; what the tests do")
    gen = sub.add_parser("generate", help="a random live scenario from a seed")
    gen.add_argument("--seed", type=int_option(0, INT64_MAX), required=True, help="an integer >= 0")
    gen.add_argument("--line", choices=sorted(LINES), default=None,
                     help="the line it is meant for (named in its header only)")
    gen.add_argument("--out", type=Path, default=None, help="write it here (default: stdout)")
    gen.add_argument("--modes", action="store_true",
                     help="producers also draw how they send: sync, ordered by key (hash), "
                          "oneway or batch, and how many threads share them (issue 45)")
    chk = sub.add_parser("check", help="check the model against a recording")
    chk.add_argument("recording", type=Path, help="a folder 'record' wrote (or data/live/...)")
    chk.add_argument("--json", action="store_true",
                     help="print the whole result (every verdict and detail) as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM and SIGHUP raise cli.Terminated: a recording's finally stops its cluster by pid
    with terminate_cleanly():
        try:
            return _run(args)
        except Terminated as exc:
            print("terminated: nothing was written, and what it started was stopped",
                  file=sys.stderr)
            return 128 + int(exc.args[0]) if exc.args else 143


def _run(args: argparse.Namespace) -> int:
    try:
        if args.command == "check":
            from rocketlb_core.live.check import check_live_recording, render

            result = check_live_recording(args.recording)
            print(json.dumps(result, indent=1) if args.json else render(result))
            return 0 if result["unexplained"] == 0 else 3
        if args.command == "generate":
            from rocketlb_core.live.generate import generate_scenario

            if args.seed < 0:
                raise LiveError(f"--seed must be >= 0, not {args.seed}")
            text = generate_scenario(args.seed, args.line, modes=args.modes)
            if args.out is None:
                sys.stdout.write(text)
            else:
                from rocketlb_core.atomic import atomic_file
                from rocketlb_core.live.generate import MARK

                atomic_file(args.out, text, MARK, "live generate")
        elif args.command == "jars":
            for role in ROLES:
                found = resolve(args.line, role)
                print(f"{role}: {len(found)} jars in {found[0].parent}")
        elif args.command == "up":
            c = live.up(args.home, args.line, args.brokers, namesrv_port=args.namesrv_port,
                        broker_port=args.broker_port, broker_heap_mb=args.broker_heap_mb)
            print(json.dumps(live.status(c.home), indent=1))
        elif args.command == "record":
            from rocketlb_core.live.record import load_scenario, record

            scenario = load_scenario(args.scenario)        # a bad file fails here, outside
            if args.isolated:
                for role in ROLES:                         # no network in the namespace
                    resolve(args.line, role)
                if any(p.language == "python" for p in scenario.producers):
                    from rocketlb_core.live.jars import python_client

                    python_client()                        # its venv, from PyPI, before
                if any(x.client == "grpc" for x in scenario.producers) \
                        or any(x.client == "grpc" for x in scenario.consumers):
                    from rocketlb_core.live.jars import line as line_of

                    # the Proxy's and the gRPC client's jars, from Maven, before
                    live.artifact_jars("rocketmq-proxy", line_of(args.line).server_version)
                    live.artifact_jars("rocketmq-client-java", live.GRPC_CLIENT_VERSION)
                if any(x.language == "go" for x in scenario.producers) \
                        or any(x.language == "go" for x in scenario.consumers):
                    live.go_driver()                       # built from the Go proxy, before
                argv_in = [sys.executable, "-m", "rocketlb_core.live", "record",
                           str(args.scenario), "--line", args.line, "--out", str(args.out)]
                argv_in += ["--force"] if args.force else []
                argv_in += ["--strict"] if args.strict else []
                return live.wait_isolated(argv_in)
            meta = record(args.scenario, args.line, args.out, force=args.force,
                          strict=args.strict)
            print(json.dumps({"recording": str(args.out), "events": len(meta["events"]),
                              "max_late_ms": meta["max_late_ms"]}))
        elif args.command == "status":
            print(json.dumps(live.status(args.home), indent=1))
        elif args.command == "down":
            stopped = live.down(args.home)
            print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
        else:
            extra = [a for a in args.args if a != "--"]
            if not extra:
                raise LiveError("admin needs an mqadmin command, e.g. admin -- clusterList")
            print(live.admin(live.Cluster.load(args.home), *extra), end="")
    except InputError as exc:           # LiveError, a bad scenario, a refused --out
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
