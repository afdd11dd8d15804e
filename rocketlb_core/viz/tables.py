"""Every table the book shows, as pandas DataFrames: the one presentation module of tables
(the core returns plain Python; this module shapes it for reading and for the charts of
``rocketlb_core.viz.charts``).

* cluster layout: ``queue_layout_frame``; fault tables: ``latency_table_frame``;
* producer: ``experiment_frame`` (seed 002's experiment on several lines);
* allocation: ``shares_frame``;
* simulation journal: ``journal_frame``, ``group_view_timeline``, ``lag_frame``,
  ``ownership_frame``;
* replay what-ifs: ``compare_producer_settings``, ``broker_share_over_time``.

>>> from rocketlb_core import data_path
>>> t = compare_producer_settings(data_path("traces", "seed002-outage"),
...     {"on": ReplayConfig(fault_tolerance=True), "off": ReplayConfig(fault_tolerance=False)})
>>> bool(t.loc["on", "failed"] < t.loc["off", "failed"])
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocketlb_core.consumer.base import AllocateStrategy, assign_all
from rocketlb_core.model import MessageQueue, TopicRoute, publish_queues, subscribe_queues
from rocketlb_core.producer.experiments import seed002_experiment
from rocketlb_core.replay.aggregates import Aggregates, summary_of
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.engines import replay_rows
from rocketlb_core.sim.world import RunResult
from rocketlb_core.trace.read import load_trace

if TYPE_CHECKING:
    import pandas as pd


def queue_layout_frame(routes: dict[str, TopicRoute]) -> pd.DataFrame:
    """Per topic and broker: how many queues producers write to and consumers read from.

    Computed through the package's route conversions (spec 1.3 and 1.4), not from raw counts:
    a read-only broker contributes no publish queues, a broker with fewer write than read queues
    contributes fewer publish queues than subscribe queues.
    """
    import pandas as pd

    rows = []
    for topic in sorted(routes):
        route = routes[topic]
        pub = publish_queues(topic, route)
        sub = subscribe_queues(topic, route)
        for qd in route.sorted_queue_datas():
            name = qd.broker_name
            rows.append({"topic": topic, "broker": name, "side": "producers write to",
                         "queues": sum(q.broker_name == name for q in pub)})
            rows.append({"topic": topic, "broker": name, "side": "consumers read from",
                         "queues": sum(q.broker_name == name for q in sub)})
    return pd.DataFrame(rows)


def latency_table_frame() -> pd.DataFrame:
    """The not-available duration for a range of reported latencies, 4.x and 5.x tables,
    computed by the package (``MQFaultStrategy.compute_not_available_duration``)."""
    import pandas as pd

    from rocketlb_core.producer import MQFaultStrategy

    points = sorted({1, 49, 50, 99, 100, 549, 550, 999, 1000, 1799, 1800, 1999, 2000, 2999, 3000,
                     4999, 5000, 14999, 15000, 30000, 60000})
    rows = []
    for label, line in (("4.x (4.7.1 to 4.9.8)", "4.9.8"), ("5.x (5.1.4 and later)", "5.3.3")):
        s = MQFaultStrategy(line)
        rows += [{"line": label, "latency_ms": x,
                  "not_available_s": s.compute_not_available_duration(x) / 1000} for x in points]
    return pd.DataFrame(rows)


def experiment_frame(fail: bool, lines: tuple[str, ...] = ("4.7.1", "4.9.8", "5.3.3")) -> Any:
    """The experiment on several lines side by side (a pandas DataFrame, one row per round)."""
    import pandas as pd

    runs = {line: seed002_experiment(line, fail) for line in lines}
    return pd.DataFrame({line: [" -> ".join(r.brokers) for r in rounds]
                         for line, rounds in runs.items()}).rename_axis("round")


def shares_frame(strategies: Mapping[str, AllocateStrategy], mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> Any:
    """Each strategy's share per consumer under one view (a pandas DataFrame for the book)."""
    import pandas as pd

    rows = {}
    for name, strategy in strategies.items():
        a = assign_all(strategy, "group", mq_all, cid_all)
        rows[name] = {cid: " ".join(q.short() for q in a.get(cid, [])) or "-"
                      for cid in dict.fromkeys(cid_all)}
    return pd.DataFrame.from_dict(rows, orient="index")


def journal_frame(result: RunResult, kinds: tuple[str, ...] = (), start_ms: int = 0,
                  end_ms: int | None = None) -> pd.DataFrame:
    """The journal's records of the given kinds, one row each (fields as a short text)."""
    import pandas as pd

    rows = []
    for r in result.world.env.journal:
        if (kinds and r.kind not in kinds) or r.time_ms < start_ms or (
                end_ms is not None and r.time_ms > end_ms):
            continue
        detail = ", ".join(f"{k}={v}" for k, v in sorted(r.fields.items())
                           if k not in ("owners", "lag"))
        rows.append({"time_s": r.time_ms / 1000, "what": r.kind, "who": r.entity,
                     "details": detail})
    return pd.DataFrame(rows)


def group_view_timeline(result: RunResult, group: str) -> pd.DataFrame:
    """How many consumers each broker lists for ``group`` over time (its consumer table)."""
    import pandas as pd

    counts: dict[str, set[str]] = {b: set() for b in result.world.brokers}
    rows: list[dict[str, Any]] = []
    for r in result.world.env.journal:
        if r.entity not in counts or r.fields.get("group") != group:
            continue
        if r.kind == "consumer_registered":
            counts[r.entity].add(r.fields["channel"])
        elif r.kind in ("consumer_unregistered", "channel_expired"):
            counts[r.entity].discard(r.fields["channel"])
        else:
            continue
        rows.append({"time_s": r.time_ms / 1000, "broker": r.entity,
                     "consumers listed": len(counts[r.entity])})
    end = (result.world.scenario.duration_ms + result.world.scenario.drain_ms) / 1000
    for b, members in counts.items():
        rows.append({"time_s": end, "broker": b, "consumers listed": len(members)})
    return pd.DataFrame(rows)


def lag_frame(result: RunResult, group: str) -> pd.DataFrame:
    """Per queue, messages waiting to be consumed by ``group``, sampled every 5 s."""
    import pandas as pd

    rows = [{"time_s": r.time_ms / 1000, "queue": q, "lag": n}
            for r in result.world.env.journal if r.kind == "lag" and r.entity == group
            for q, n in r.fields["lag"].items()]
    return pd.DataFrame(rows)


def ownership_frame(result: RunResult, group: str) -> pd.DataFrame:
    """Per queue, intervals of constant ownership: who owned it and whether that was one owner,
    nobody, or several at once."""
    import pandas as pd

    end = result.world.scenario.duration_ms + result.world.scenario.drain_ms
    snaps = [(r.time_ms, r.fields["owners"]) for r in result.world.env.journal
             if r.kind == "ownership" and r.entity == group]
    rows = []
    for i, (t, owners) in enumerate(snaps):
        t2 = snaps[i + 1][0] if i + 1 < len(snaps) else end
        if t2 <= t:
            continue
        for queue, who in owners.items():
            state = "unowned" if not who else "one owner" if len(who) == 1 else "owned twice"
            rows.append({"queue": queue, "start_s": t / 1000, "end_s": t2 / 1000,
                         "owners": ", ".join(who) or "-", "state": state})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    # merge consecutive intervals with the same owners
    frame = frame.sort_values(["queue", "start_s"], kind="stable").reset_index(drop=True)
    merged: list[dict[str, Any]] = []
    for row in frame.to_dict("records"):
        last = merged[-1] if merged else None
        if last and last["queue"] == row["queue"] and last["owners"] == row["owners"] and \
                last["end_s"] == row["start_s"]:
            last["end_s"] = row["end_s"]
        else:
            merged.append(row)
    return pd.DataFrame(merged)


def broker_share_over_time(trace_dir: Path, settings: dict[str, ReplayConfig],
                           bucket_ms: int = 10_000) -> pd.DataFrame:
    """Messages stored per broker per time bucket (by when the send started), per setting."""
    import pandas as pd

    trace = load_trace(trace_dir)
    brokers = sorted(b.broker_name for b in trace.layout.brokers)
    rows = []
    for label, config in settings.items():
        counts: Counter[tuple[int, str]] = Counter()
        failed: Counter[int] = Counter()
        for r in replay_rows(trace, config):
            bucket = r[3] // bucket_ms
            if r[5] == "FAILED":
                failed[bucket] += 1
            else:
                counts[(bucket, r[6])] += 1
        last = max([b for b, _ in counts] + list(failed) + [0])
        for bucket in range(last + 1):
            for broker in brokers:
                rows.append({"setting": label, "t_s": bucket * bucket_ms // 1000,
                             "broker": broker, "messages": counts[(bucket, broker)]})
            rows.append({"setting": label, "t_s": bucket * bucket_ms // 1000,
                         "broker": "failed", "messages": failed[bucket]})
    return pd.DataFrame(rows)


def compare_producer_settings(trace_dir: Path, settings: dict[str, ReplayConfig]
                              ) -> pd.DataFrame:
    """One row per setting: sends, stored, failed, retries, latency p50/p99, share per broker."""
    import pandas as pd

    trace = load_trace(trace_dir)
    rows = {}
    for label, config in settings.items():
        agg = Aggregates()
        for r in replay_rows(trace, config):
            agg.add(r)
        s = summary_of(agg, config, str(trace.meta.get("name", "")))
        rows[label] = {"sends": s["sends"], "stored": s["stored"], "failed": s["failed"],
                       "retries": s["retries"], "latency_ms_p50": s["latency_ms_p50"],
                       "latency_ms_p99": s["latency_ms_p99"],
                       **{f"stored on {b}": n for b, n in s["stored_by_broker"].items()}}
    return pd.DataFrame.from_dict(rows, orient="index")


def facts(values: Mapping[str, Any]) -> pd.DataFrame:
    """A few named results as a table instead of a dict's repr: one row per name, one ``value``
    column; a mapping of mappings gives one column per outer key (``{"off": {...}, "on": {...}}``).
    Lists become comma-separated text."""
    import pandas as pd

    def cell(v: Any) -> Any:
        return ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v

    if values and all(isinstance(v, Mapping) for v in values.values()):
        return pd.DataFrame({k: {n: cell(x) for n, x in v.items()} for k, v in values.items()})
    return pd.DataFrame({"value": {k: cell(v) for k, v in values.items()}})
