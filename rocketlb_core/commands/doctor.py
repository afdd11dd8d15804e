"""``rocketlb doctor PATH...``: what is wrong with a real cluster's balancing, from what it
already wrote (``rocketlb_core.doctor``; issue 35).

Gather, on a machine that reaches the name server (any subset helps; every file is recognised
by its content, so name them as you like):

  mqadmin consumerConnection -g GROUP -n NAMESRV      > conn-GROUP.txt
  mqadmin consumerProgress -g GROUP -s true -n NAMESRV > progress-GROUP.txt
  mqadmin topicRoute -t TOPIC -n NAMESRV              > route-TOPIC.txt
  mqadmin clusterList -n NAMESRV                      > clusterList.txt
  mqadmin brokerStatus -b BROKER_ADDR -n NAMESRV      > status-BROKER.txt

plus each consumer's and producer's ~/logs/rocketmqlogs/rocketmq_client.log, each broker's
~/logs/rocketmqlogs/broker.log (.gz allowed), and a dump of RMQ_SYS_TRACE_TOPIC. Put them in a
folder and run ``rocketlb doctor FOLDER``. Only the consumers' client logs say which allocation
strategy each member uses (its rebalance lines) and which tags it subscribes (its heartbeat
lines): mixed strategies and different tags on one topic are found from them (give every
member's log; the broker lists one subscription per topic for the whole group). Those are the
remoting clients' logs (rocketmq-client 4.x and 5.x). A gRPC Java client's log (rocketmq-client-
java 5.x writes ~/logs/rocketmq/rocketmq-client.log) is read for a push consumer's group and the
assignment the Proxy gave it, which finds a group shared by remoting and gRPC consumers; a gRPC
Python client's log and a RocketMQ Proxy's logs are recognised and listed as not read, with the
reason, and the notes say what that leaves unchecked.

What a producer finding's fix would change (the switch on or off, 5.3.3's rules) is found by
replaying the recorded producer day when the inputs hold one (the trace dump and the producers'
client logs, with the topic's route from topicRoute or the logs): the trace importer rebuilds
the day and the Python engine of ``rocketlb replay producer`` replays it as recorded and with
the fix; the report says "(replayed)". Without one it is computed by the core's fault strategy
alone, and the JSON says why (``before_after.source``, ``replay_unavailable``).

The report goes to stdout (colour only on a terminal); ``--json`` prints the findings as one
JSON document instead (schema: data/README.md, "rocketlb doctor"); ``--html PAGE`` also writes
one self-contained offline page (the findings, queue ownership, lag per queue, the isolation
timeline; written atomically, never over a file rocketlb did not write). Files of no known
kind, or of a kind it does not read, are listed as ignored with the reason, never an error; a
known file with a malformed line is an error naming the file and the line (``--skip-bad``:
skipped and counted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rocketlb_core.cli import print_json, subparser


def register(sub: Any) -> None:
    p = subparser(sub, "doctor", "diagnose a real cluster's balancing from mqadmin outputs and "
                  "logs", "rocketlb doctor data/live/doctor/capture-4", doctor,
                  checks="problems were found (the report lists them)", description=__doc__)
    p.add_argument("paths", type=Path, nargs="+", metavar="PATH",
                   help="files and folders (searched recursively) of mqadmin outputs and logs")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--html", type=Path, metavar="PAGE", default=None,
                   help="also write the report as one self-contained offline HTML page (never "
                        "over a file rocketlb did not write)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip and count malformed lines of known files instead of failing")
    p.add_argument("--log-zone", metavar="OFFSET", default=None,
                   help="the UTC offset clients up to 5.0.0 wrote their log times in (their "
                        "JVM's zone, e.g. +08:00; default UTC); from 5.1.0 they write GMT+8, "
                        "told by the stamps' form (.SSS, not ,SSS)")
    p.add_argument("--colour", "--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the report (auto: only on a terminal)")


def doctor(args: argparse.Namespace) -> int:
    from rocketlb_core.doctor import as_json, examine
    from rocketlb_core.doctor.report import render

    if args.html is not None:
        from rocketlb_core.doctor.html import check_html_target

        check_html_target(args.html)                # refuse before the work, not after
    zone_4x = None
    if args.log_zone is not None:
        from rocketlb_core.doctor.producers import parse_zone
        from rocketlb_core.errors import InputError

        try:
            zone_4x = parse_zone(args.log_zone)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    inputs, findings, notes = examine(args.paths, skip_bad=args.skip_bad, zone_4x=zone_4x)
    if args.html is not None:
        from rocketlb_core.doctor.html import render_html, write_html

        write_html(args.html, render_html(inputs, findings, notes))
    if args.json:
        print_json(as_json(inputs, findings, notes))
    else:
        colour = args.colour == "always" or (args.colour == "auto" and sys.stdout.isatty())
        sys.stdout.write(render(inputs, findings, notes, colour=colour))
    return 3 if findings else 0
