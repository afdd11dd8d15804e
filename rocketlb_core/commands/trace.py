"""``rocketlb trace layout|generate|validate``: the trace format's commands
(``rocketlb_core.trace``; format in ``data/README.md``).

* ``layout SRC --out DST``: rewrite a trace whose sends are in any order into the replay layout
  (in memory: for traces that fit in RAM; ``generate`` writes large traces in the layout);
* ``generate --sends N --out DIR``: a large synthetic trace for scale tests and benchmarks;
* ``validate TRACE``: check every file of a trace and print what it holds, as JSON;
* ``import``: a trace from what a real cluster wrote (``rocketlb_core.trace.importer``): a
  recording of ``python -m rocketlb_core.live record`` (``--recording DIR``), or a message-trace
  dump with client and broker logs and the cluster layout (``--msgtrace`` ...).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rocketlb_core.cli import add_out, add_quiet, add_seed, epilog, print_json, subparser
from rocketlb_core.numbers import INT32_MAX, INT64_MAX, float_option, int_option


def register(sub: Any) -> None:
    tp = sub.add_parser("trace", help="write, rewrite and check trace folders",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog=epilog("rocketlb trace validate data/traces/seed002-outage"))
    verbs = tp.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = subparser(verbs, "layout", "rewrite a trace's sends into the replay layout (in memory)",
                  "rocketlb trace layout my-trace --out my-trace-in-layout", layout)
    p.add_argument("src", type=Path, help="trace folder")
    p.add_argument("dst", type=Path, nargs="?", default=None,
                   help="new trace folder (or --out)")
    add_out(p, required=False, help="new trace folder (written atomically)")
    p.add_argument("--producers-per-file", type=int_option(1, INT32_MAX), default=None)
    add_quiet(p)
    g = subparser(verbs, "generate", "a large synthetic trace for scale tests and benchmarks",
                  "rocketlb trace generate --sends 10000000 --out /tmp/t10m", generate)
    g.add_argument("--sends", type=int_option(1, INT64_MAX), required=True)
    g.add_argument("--producers", type=int_option(1, INT64_MAX), default=64)
    g.add_argument("--rate", type=float_option(0.0, 1e9), default=10_000.0,
                   help="messages per second in all")
    g.add_argument("--files", type=int_option(1, INT64_MAX), default=8,
                   help="part files (Spark tasks)")
    g.add_argument("--churn", action="store_true",
                   help="conditions that change every second per broker, about 10%% of sends "
                        "above 550 ms, flapping outages (rocketlb_core.trace.generate)")
    add_seed(g)
    add_out(g)
    add_quiet(g)
    v = subparser(verbs, "validate", "check a trace folder and describe it (JSON)",
                  "rocketlb trace validate data/traces/seed002-outage", validate)
    v.add_argument("trace", type=Path, help="trace folder")
    v.add_argument("--rows", action="store_true",
                   help="also read every send (time order within each producer); default: "
                        "the sends are checked from the Parquet footers")
    add_quiet(v)
    i = subparser(verbs, "import", "a trace from a real cluster's message trace and logs",
                  "rocketlb trace import --recording data/live/producer-outage-5 --out t", imp)
    i.add_argument("--recording", type=Path, help="a folder 'python -m rocketlb_core.live "
                   "record' wrote (everything else is taken from it)")
    i.add_argument("--msgtrace", type=Path, help="a dump of RMQ_SYS_TRACE_TOPIC: JSON lines "
                   "with a 'body' (data/README.md), .gz allowed")
    i.add_argument("--client-log", type=Path, action="append", default=[],
                   help="a client's rocketmq_client.log (repeat for each client)")
    i.add_argument("--broker-log", type=Path, action="append", default=[],
                   help="a broker's broker.log (repeat for each broker)")
    i.add_argument("--layout", type=Path, help="a folder with brokers.csv and route.csv: broker "
                   "names and addresses, the topic's queues")
    i.add_argument("--topic", help="the topic to import (with --msgtrace)")
    i.add_argument("--line", help="the clients' RocketMQ version, e.g. 4.9.8 or 5.3.3")
    i.add_argument("--log-utc-offset", type=int_option(-1439, 1439), default=0,
                   help="minutes east of UTC of 4.x and 5.0.x client logs (the JVM's zone; "
                        "5.1.0 and later clients, and the brokers, write GMT+8)")
    i.add_argument("--skip-bad", action="store_true",
                   help="count malformed lines and records instead of failing on the first")
    add_out(i)
    add_quiet(i)


def layout(args: argparse.Namespace) -> int:
    from rocketlb_core.errors import UsageError
    from rocketlb_core.trace.write import relayout

    if (args.dst is None) == (args.out is None):
        raise UsageError("give the new trace folder once: as DST or as --out")
    dst = args.dst if args.dst is not None else args.out
    relayout(args.src, dst, args.producers_per_file, force=args.force)
    print_json({"trace": str(dst)})
    return 0


def generate(args: argparse.Namespace) -> int:
    from rocketlb_core.trace.generate import generate as generate_trace

    generate_trace(args.out, args.sends, args.producers, args.rate, args.files, args.seed,
                   churn=args.churn, force=args.force)
    print_json({"trace": str(args.out), "sends": args.sends})
    return 0


def validate(args: argparse.Namespace) -> int:
    from rocketlb_core.trace.read import describe, load_trace, validate_trace

    trace = validate_trace(args.trace) if args.rows else load_trace(args.trace, sends=False)
    print_json(describe(trace))
    return 0


def imp(args: argparse.Namespace) -> int:
    from rocketlb_core.errors import UsageError
    from rocketlb_core.trace.cluster import load_cluster
    from rocketlb_core.trace.importer import import_recording, import_records

    if (args.recording is None) == (args.msgtrace is None):
        raise UsageError("give --recording DIR, or --msgtrace FILE with --layout, --topic and "
                         "--line")
    if args.recording is not None:
        summary = import_recording(args.recording, args.out, skip_bad=args.skip_bad,
                                   force=args.force)
    else:
        if args.layout is None or args.topic is None or args.line is None:
            raise UsageError("--msgtrace needs --layout, --topic and --line")
        layout = load_cluster(args.layout)
        if args.topic not in layout.routes:
            raise UsageError(f"{args.layout}/route.csv has no rows for topic {args.topic!r}")
        summary = import_records(
            args.out, msgtrace=args.msgtrace, client_logs=args.client_log,
            broker_logs=args.broker_log,
            brokers=[(b.broker_name, b.address) for b in layout.brokers if b.broker_id == 0],
            route=layout.routes[args.topic].queue_datas, topic=args.topic, line=args.line,
            name=Path(args.out).name, utc_offset_minutes=args.log_utc_offset,
            skip_bad=args.skip_bad, force=args.force, inputs=[args.layout])
    print_json(summary)
    return 0
