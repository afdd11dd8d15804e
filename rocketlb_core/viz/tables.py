"""Every table the book shows, as pandas DataFrames: the one presentation module of tables
(the core returns plain Python; this module shapes it for reading and for the charts of
``rocketlb_core.viz.charts``).

* cluster layout: ``queue_layout_frame``; fault tables: ``latency_table_frame``;
* producer: ``experiment_frame`` (seed 002's experiment on several lines);
* allocation: ``shares_frame``;
* simulation journal: ``journal_frame``, ``group_view_timeline``, ``lag_frame``,
  ``ownership_frame``, ``broker_visibility_frame``;
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
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocketlb_core.consumer.base import AllocateStrategy, assign_all
from rocketlb_core.consumer.metrics import idle_consumers, loads
from rocketlb_core.consumer.rebalance import RebalanceStep
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


def experiment_frame(fail: bool, lines: tuple[str, ...] = ("4.7.1", "4.9.8", "5.3.3"),
                     index_start: int = -1, rounds: int = 10) -> Any:
    """The experiment on several lines side by side (a pandas DataFrame, one row per round).

    ``index_start`` is the counter's stored value before the first pick (upstream draws it at
    random); the default pins the first pick to broker1, as in the article's printed run, and
    3 makes it broker2 (positions 4 to 7, the other half of the starts) on every line.
    """
    import pandas as pd

    runs = {line: seed002_experiment(line, fail, rounds=rounds, index_start=index_start)
            for line in lines}
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


def start_offset_frame(max_offset: int, search_offset: int, committed: int,
                       group: str = "GID", topic: str = "TopicTest",
                       line: str = "4.9.8") -> pd.DataFrame:
    """Where a newly assigned queue starts (spec 4.3), for every ``consumeFromWhere`` on the
    topic and on the group's retry topic, against the three kinds of broker answer: a committed
    offset, "never committed" (-1) and a failed lookup (-2). The offsets come from
    ``compute_pull_from_where``; a queue it does not start this round reads "skipped"."""
    import pandas as pd

    from rocketlb_core.consumer.rebalance import (
        RETRY_PREFIX,
        ConsumeFromWhere,
        OffsetLookupError,
        compute_pull_from_where,
    )

    answers = {f"committed {committed}": committed, "never committed (-1)": -1,
               "lookup failed (-2)": -2}
    rows = []
    for cfw in ConsumeFromWhere:
        for t in (topic, f"{RETRY_PREFIX}{group}"):
            row: dict[str, Any] = {"consumeFromWhere": cfw.value, "topic": t}
            for label, answer in answers.items():
                try:
                    start = compute_pull_from_where(cfw, answer, t, max_offset=max_offset,
                                                    search_offset=search_offset, line=line)
                except OffsetLookupError:
                    start = -1
                row[label] = str(start) if start >= 0 else "skipped"
            rows.append(row)
    return pd.DataFrame(rows)


def rebalance_step_frame(step: RebalanceStep) -> pd.DataFrame:
    """One ``update_process_queue_table`` step as a table: for each outcome, the queues (and
    where each created queue starts reading)."""
    import pandas as pd

    def names(queues: Sequence[MessageQueue]) -> str:
        return " ".join(q.short() for q in queues) or "-"

    rows = {
        "dropped (offset persisted)": names(step.dropped),
        "kept, flagged dropped (busy)": names(step.refused),
        "created": " ".join(f"{q.short()} from {off}" for q, off in step.created) or "-",
        "not created this round": " ".join(f"{q.short()} ({why})" for q, why in step.skipped)
                                  or "-",
    }
    return pd.DataFrame({"queues": rows})


def crash_timing_frame(rows: Sequence[Mapping[str, Any]], path: bool = False) -> pd.DataFrame:
    """``rocketlb_core.sim.experiments.crash_timing`` in long form, for a chart: per crash
    phase, seconds until the brokers dropped the consumer and until its queues had an owner.
    ``path``: a ``dropped by`` column too, the row's ``dropped_by`` (how the last broker dropped
    it: ``idle close``, ``scan``, ``closed``; ``None`` if no broker did before the run ended), on
    both of the row's measures, for a chart's point shape.

    >>> rows = [{"after_heartbeat_s": 1.0, "dropped_s": 120.0, "owned_again_s": 120.001,
    ...          "dropped_by": "idle close"}]
    >>> list(crash_timing_frame(rows).columns)
    ['after_heartbeat_s', 'measure', 'seconds_after_crash']
    >>> crash_timing_frame(rows, path=True)["dropped by"].tolist()
    ['idle close', 'idle close']
    """
    import pandas as pd

    names = {"dropped_s": "brokers drop it", "owned_again_s": "its queues have an owner again"}
    return pd.DataFrame([{"after_heartbeat_s": r["after_heartbeat_s"], "measure": label,
                          "seconds_after_crash": r[key]}
                         | ({"dropped by": r["dropped_by"]} if path else {})
                         for r in rows for key, label in names.items()])


def hash_remap_frame(keys: int = 10_000, topic: str = "TopicTest") -> pd.DataFrame:
    """Ordered messages under ``SelectMessageQueueByHash`` when the publish list changes: for
    route changes of a topic on two or three brokers of four write queues each, the share of
    ``keys`` (``order-0`` ... ) whose queue changes, so whose order across the change is lost."""
    import pandas as pd

    from rocketlb_core.producer.selectors import keys_moved

    def ql(*brokers: tuple[str, int]) -> list[MessageQueue]:
        return [MessageQueue(topic, b, i) for b, n in brokers for i in range(n)]

    two = ql(("broker-a", 4), ("broker-b", 4))
    three = ql(("broker-a", 4), ("broker-b", 4), ("broker-c", 4))
    changes = {
        "broker-a leaves (of a, b)": (two, ql(("broker-b", 4))),
        "broker-b leaves (of a, b)": (two, ql(("broker-a", 4))),
        "broker-b leaves (of a, b, c)": (three, ql(("broker-a", 4), ("broker-c", 4))),
        "broker-c joins a, b": (two, three),
        "write queues 4 -> 8 per broker": (two, ql(("broker-a", 8), ("broker-b", 8))),
        "write queues 4 -> 5 per broker": (two, ql(("broker-a", 5), ("broker-b", 5))),
    }
    names = [f"order-{i}" for i in range(keys)]
    rows = []
    for label, (before, after) in changes.items():
        moved, total = keys_moved(names, before, after)
        rows.append({"route change": label, "keys moved (%)": round(100 * moved / total, 1)})
    return pd.DataFrame(rows)


def mixed_strategies_frame(strategies: Mapping[str, AllocateStrategy],
                           mq_all: Sequence[MessageQueue], group: str = "g") -> pd.DataFrame:
    """A group whose members run *different* strategies: each client id in ``strategies``
    computes its own share with its own strategy from the same view (the sorted queues and
    ids), as each real consumer does. Per queue: who took it and whether that makes it owned
    once, by nobody, or twice."""
    import pandas as pd

    cids = sorted(strategies)
    queues = sorted(mq_all)
    shares = {cid: set(strategies[cid].allocate(group, cid, queues, cids) or ()) for cid in cids}
    rows = []
    for q in queues:
        who = [cid for cid in cids if q in shares[cid]]
        state = "unowned" if not who else "one owner" if len(who) == 1 else "owned twice"
        rows.append({"queue": q.short(), "taken by": ", ".join(who) or "-", "state": state})
    return pd.DataFrame(rows)


RETRY_NOBODY = "no member yet (a queue id the route does not list)"
"""``retry_share_frame``'s row for the messages no member consumes."""


def retry_share_frame(cases: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Who consumes a group's retried messages (``consumer.retry.retry_share``), per case
    (``cases``: a label -> ``retry_share``'s keyword arguments): per member its retry queues
    and the messages it consumes, and a row ``RETRY_NOBODY`` for those landed in a queue id the
    route does not list (read by no member until it does)."""
    import pandas as pd

    from rocketlb_core.consumer.retry import retry_share

    rows = []
    for label, kwargs in cases.items():
        got = retry_share(**kwargs)
        for c, qs in got.assignment.items():
            rows.append({"case": label, "member": c,
                         "retry queues": ", ".join(q.short() for q in qs) or "-",
                         "messages": got.consumed[c]})
        rows.append({"case": label, "member": RETRY_NOBODY, "retry queues": "-",
                     "messages": got.unlisted})
    return pd.DataFrame(rows)


VISIBILITY_STATES = ("up, listed", "down, still listed", "down, dropped", "up, not yet listed")


def broker_visibility_frame(result: RunResult, broker: str) -> pd.DataFrame:
    """Who believed ``broker`` was there, against whether it was (spec 7, 4.5): per name server
    and per producer of a topic on it, intervals of one of ``VISIBILITY_STATES``.

    Read from the run's journal: the broker's ``broker_crash`` (``clean``: the name servers drop
    it at once; ``silent``: at their ``broker_expired``) and ``broker_restart`` (it registers with
    every name server at once), and each producer's ``producer_route`` (its publish list after a
    route poll). Name server outages are not drawn: use it on runs without them."""
    import pandas as pd

    scenario = result.world.scenario
    end = scenario.duration_ms + scenario.drain_ms
    up_changes: list[tuple[int, bool]] = []
    name_servers = [ns.name for ns in result.world.name_servers]
    listed: dict[str, list[tuple[int, bool]]] = {ns: [(0, True)] for ns in name_servers}
    for r in result.world.env.journal:
        f = r.fields
        if r.kind == "scenario_event" and f.get("broker") == broker:
            if f.get("event") == "broker_crash":
                up_changes.append((r.time_ms, False))
                if f.get("mode") == "clean":
                    for ns in name_servers:
                        listed[ns].append((r.time_ms, False))
            elif f.get("event") == "broker_restart":
                up_changes.append((r.time_ms, True))
                for ns in name_servers:
                    listed[ns].append((r.time_ms, True))
        elif r.kind == "broker_expired" and f.get("broker") == broker:
            listed[r.entity].append((r.time_ms, False))
        elif r.kind == "producer_route":
            on = any(q.startswith(f"{broker}/") for q in f["queues"])
            listed.setdefault(r.entity, [(0, False)]).append((r.time_ms, on))

    def state_at(changes: list[tuple[int, bool]], t: int) -> bool:
        value = changes[0][1]
        for when, v in changes:
            if when <= t:
                value = v
        return value

    truth = [(0, True), *up_changes]
    rows: list[dict[str, Any]] = []
    for party, changes in listed.items():
        cuts = sorted({0, end, *(t for t, _ in changes), *(t for t, _ in up_changes)})
        for t, t2 in pairwise(cuts):
            up, seen = state_at(truth, t), state_at(changes, t)
            state = VISIBILITY_STATES[(0 if seen else 3) if up else (1 if seen else 2)]
            if rows and rows[-1]["party"] == party and rows[-1]["state"] == state:
                rows[-1]["end_s"] = t2 / 1000
            else:
                rows.append({"party": party, "start_s": t / 1000, "end_s": t2 / 1000,
                             "state": state})
    return pd.DataFrame(rows)


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


def fault_state_row(strategy: Any, publish_info: Any, brokers: Sequence[str], now_ms: int,
                    picks: int = 8) -> dict[str, str]:
    """What a 5.x producer's fault strategy says of each broker at ``now_ms`` (``available`` or
    ``isolated``, ``reachable`` or not) and where its next ``picks`` selections go (book
    chapter 3): ``strategy`` an ``MQFaultStrategy``, ``publish_info`` a ``TopicPublishInfo``
    (its counter moves, as a producer's would).

    >>> from rocketlb_core.model import MessageQueue, QueueData
    >>> from rocketlb_core.producer import MQFaultStrategy, TopicPublishInfo
    >>> from rocketlb_core.producer.index import ThreadLocalIndex
    >>> qs = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(2)]
    >>> tp = TopicPublishInfo(qs, [QueueData(b, 2, 2) for b in "ab"],
    ...                       ThreadLocalIndex("5.3.3", stored=0))
    >>> s = MQFaultStrategy("5.3.3", send_latency_fault_enable=True)
    >>> s.update_fault_item("a", 3000, True, now_ms=0)
    >>> fault_state_row(s, tp, ["a", "b"], 1_000)["next 8 picks"]
    'b x8'
    """
    from collections import Counter

    row = {b: ("available" if strategy.is_available(b, now_ms) else "isolated") + ", "
              + ("reachable" if strategy.is_reachable(b) else "unreachable") for b in brokers}
    chosen = Counter(strategy.select(publish_info, None, now_ms=now_ms).broker_name
                     for _ in range(picks))
    row[f"next {picks} picks"] = ", ".join(f"{b} x{n}" for b, n in sorted(chosen.items()))
    return row


def plain_number(x: Any) -> int | float:
    """A number as prose writes it: ``12`` for ``12.0``, ``12.5`` as it is (a glued value read
    from a frame's float column).

    >>> plain_number(12.0), plain_number(12.5), plain_number(7)
    (12, 12.5, 7)
    """
    return int(x) if float(x).is_integer() else float(x)


def and_list(items: Sequence[Any]) -> str:
    """``a, b and c``: items as a sentence lists them.

    >>> and_list([3, 3, 2]), and_list(["x"]), and_list(["x", "y"])
    ('3, 3 and 2', 'x', 'x and y')
    """
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


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


def send_outcomes_frame(setups: Mapping[str, Any], line: str = "4.9.8", sends: int = 1000,
                        fault_tolerance: bool = False, config: Any = None) -> pd.DataFrame:
    """Where ``sends`` back-to-back synchronous sends end up under each broker model of
    ``setups`` (name -> ``rocketlb_core.producer.models`` model), run by
    ``producer.experiments.producer_run`` with ``config`` (a ``SendConfig``; upstream's defaults
    when None): one row per setup and outcome (``stored on <broker>`` or ``failed``) with the
    count, the attempts made and the sends' p99 duration."""
    import pandas as pd

    from rocketlb_core.producer.experiments import producer_run

    brokers = ("broker-a", "broker-b")
    rows = []
    for setup, world in setups.items():
        run = producer_run(world, line, fault_tolerance, sends=sends, brokers=brokers,
                           config=config)
        counts = Counter(f"stored on {r.queue.broker_name}" if r.stored and r.queue else "failed"
                         for r in run)
        attempts = sum(len(r.attempts) for r in run)
        durations = sorted(r.end_ms - r.start_ms for r in run)
        p99 = durations[min(len(durations) - 1, (99 * len(durations)) // 100)]
        for outcome in [*(f"stored on {b}" for b in brokers), "failed"]:
            rows.append({"setup": setup, "outcome": outcome, "sends": counts[outcome],
                         "attempts": attempts, "p99_ms": p99})
    return pd.DataFrame(rows)


def group_size_frame(strategy: AllocateStrategy, mq_all: Sequence[MessageQueue],
                     max_consumers: int) -> pd.DataFrame:
    """For 1..``max_consumers`` consumers: the most and fewest queues a consumer gets, and how
    many get none (long format: ``consumers``, ``measure``, ``value``)."""
    import pandas as pd

    rows = []
    for n in range(1, max_consumers + 1):
        ids = sorted(f"10.0.0.{i}@c{i:02d}" for i in range(1, n + 1))
        split: dict[str, list[MessageQueue]] = {cid: [] for cid in ids}
        split |= assign_all(strategy, "g", list(mq_all), ids)
        sizes = loads(split).values()
        for measure, value in (("most queues on one consumer", max(sizes)),
                               ("fewest queues on one consumer", min(sizes)),
                               ("consumers with no queue", len(idle_consumers(split)))):
            rows.append({"consumers": n, "measure": measure, "value": value})
    return pd.DataFrame(rows)


def multi_topic_load_frame(strategies: Mapping[str, AllocateStrategy], topics: int,
                           queues_per_topic: int, consumers: int,
                           brokers: Sequence[str] = ("broker-a", "broker-b")) -> pd.DataFrame:
    """A group subscribed to ``topics`` topics of ``queues_per_topic`` queues each (spread over
    ``brokers``): the queues each consumer holds in all, per strategy. Every topic is allocated
    on its own with the same sorted ids (spec 9.2, upstream issue #1945)."""
    import pandas as pd

    ids = sorted(f"10.0.0.{i}@c{i}" for i in range(1, consumers + 1))
    per_broker = queues_per_topic // len(brokers)
    rows = []
    for name, strategy in strategies.items():
        load: Counter[str] = Counter({cid: 0 for cid in ids})
        for t in range(topics):
            mqs = [MessageQueue(f"Topic{t}", b, i) for b in brokers for i in range(per_broker)]
            for cid, share in assign_all(strategy, "g", mqs, ids).items():
                load[cid] += len(share)
        rows += [{"strategy": name, "consumer": cid.split("@")[1], "queues": load[cid]}
                 for cid in ids]
    return pd.DataFrame(rows)


def long_measures(values: Mapping[str, Mapping[str, Any]], measures: Mapping[str, str],
                  scale: Mapping[str, float] | None = None, row_name: str = "setting"
                  ) -> pd.DataFrame:
    """``{row: {key: value}}`` as long rows for ``charts.facet_bars_chart``: ``measures`` maps
    each key to the label shown (with its unit), ``scale`` divides a key's values (ms -> s)."""
    import pandas as pd

    scale = scale or {}
    return pd.DataFrame([{row_name: row, "measure": label,
                          "value": float(vals[key]) / scale.get(key, 1.0)}
                         for key, label in measures.items() for row, vals in values.items()])


def sends_over_time_frame(world: Any, settings: Mapping[str, tuple[str, bool]],
                          duration_ms: int, every_ms: int, bucket_ms: int,
                          brokers: Sequence[str] = ("broker-a", "broker-b")) -> pd.DataFrame:
    """One producer thread sending a message every ``every_ms`` for ``duration_ms`` under
    ``world`` (``producer.experiments.producer_run``), for each setting ``name -> (line,
    sendLatencyFaultEnable)``: messages stored per broker per bucket (columns ``setting``,
    ``t_s``, ``broker``, ``messages``) for ``charts.broker_share_chart``."""
    import pandas as pd

    from rocketlb_core.producer.experiments import producer_run

    rows = []
    for name, (line, fault) in settings.items():
        run = producer_run(world, line, fault, until_ms=duration_ms, every_ms=every_ms,
                           brokers=brokers)
        counts = Counter((r.start_ms // bucket_ms, r.queue.broker_name)
                         for r in run if r.stored and r.queue)
        for k in range(-(-duration_ms // bucket_ms)):
            for b in brokers:
                rows.append({"setting": name, "t_s": k * bucket_ms // 1000, "broker": b,
                             "messages": counts[(k, b)]})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------- live recordings (ch. 10)

LIVE_STATES = ("up", "no answer (paused, silent)", "refused (killed, clean)",
               "in the publish list", "not in the publish list")
LIVE_COLORS = ("#59a14f", "#f28e2b", "#e15759", "#4e79a7", "#bab0ac")


def _recording(recording: Path | str) -> dict[str, Any]:
    import json

    return dict(json.loads((Path(recording) / "recording.json").read_text(encoding="utf-8")))


def _producer_label(p: Mapping[str, Any]) -> str:
    return f"{p['name']} (fault tolerance {'on' if p['fault_tolerance'] else 'off'})"


def live_sends_frame(recording: Path | str, trace: Path | str,
                     bucket_ms: int = 1000) -> pd.DataFrame:
    """Where upstream's producers really stored each message (the recording's ground truth),
    counted per ``bucket_ms`` and broker (``failed``: the send failed), per producer; time in
    seconds of the imported trace."""
    import gzip
    import json

    import pandas as pd

    from rocketlb_core.trace.importer import origin_ms

    meta = _recording(recording)
    origin = origin_ms(load_trace(trace, sends=False).meta)
    counts: Counter[tuple[str, float, str]] = Counter()
    for p in meta["producers"]:
        rows = gzip.decompress((Path(recording) / "sends" / f"{p['name']}.jsonl.gz")
                               .read_bytes()).decode().splitlines()
        for row in map(json.loads, rows):
            t = (int(row["sent_ms"]) - origin) // bucket_ms * bucket_ms / 1000
            counts[(_producer_label(p), t, row.get("broker", "failed"))] += 1
    return pd.DataFrame([{"producer": k[0], "time_s": k[1], "where": k[2], "sends": n}
                         for k, n in sorted(counts.items())])


_SCRATCH: list[Any] = []


def import_live_recordings(folder: Path | str, into: Path | str | None = None,
                           prefix: str = "") -> dict[str, tuple[Path, Path]]:
    """Import every recording under ``folder`` (``data/live``) whose name starts with
    ``prefix`` into trace folders under ``into`` (default: a temporary folder, removed when the
    process exits): name -> (recording, trace)."""
    import tempfile

    from rocketlb_core.trace.importer import import_recording

    if into is None:
        scratch = tempfile.TemporaryDirectory(prefix="rocketlb-imported-")
        _SCRATCH.append(scratch)                  # kept alive until exit, then removed
        into = scratch.name
    into = Path(into)
    out = {}
    for rec in sorted(p.parent for p in Path(folder).glob(f"{prefix}*/recording.json")):
        import_recording(rec, into / rec.name)
        out[rec.name] = (rec, into / rec.name)
    return out


def live_broker_frame(recording: Path | str, trace: Path | str,
                      broker: str = "broker-a") -> pd.DataFrame:
    """``broker`` three ways, as Gantt rows (``charts.interval_chart`` with ``LIVE_STATES``):
    what the scenario did to it (the recording's events), what the clients observed (the
    conditions the importer derived from their failed and stored attempts), and whether it was
    in each producer's publish list (the route changes its client logged)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import _client_log
    from rocketlb_core.trace.clientlog import stamp_ms
    from rocketlb_core.trace.importer import log_offset, origin_ms

    meta = _recording(recording)
    loaded = load_trace(trace, sends=False)
    origin = origin_ms(loaded.meta)
    end_s = loaded.meta["end_ms"] / 1000
    rows: list[dict[str, Any]] = []

    def spans(who: str, changes: Sequence[tuple[float, str]], first: str) -> None:
        points = [(0.0, first), *sorted(changes), (end_s, "")]
        for (t0, state), (t1, _) in pairwise(points):
            if t1 > t0:
                rows.append({"who": who, "state": state, "start_s": round(t0, 3),
                             "end_s": round(t1, 3)})

    scenario: list[tuple[float, str]] = []
    for e in meta["events"]:
        if e["target"] != broker:
            continue
        t = (e["wall_ms"] - origin) / 1000
        state = {"pause": LIVE_STATES[1], "resume": "up", "kill": LIVE_STATES[2],
                 "restart": LIVE_STATES[2]}[e["action"]]
        scenario.append((t, state))
        if e["action"] == "restart":
            scenario.append(((e["done_ms"] - origin) / 1000, "up"))
    spans("what the scenario did", scenario, "up")
    c = loaded.conditions
    observed = []
    for t, b, kind, mode in zip(c["time_ms"], c["broker"], c["kind"], c["mode"], strict=True):
        if b == broker and kind in ("down", "up"):
            observed.append((t / 1000, "up" if kind == "up" else
                             LIVE_STATES[1] if mode == "silent" else LIVE_STATES[2]))
    spans("what the clients observed", observed, "up")
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    for p in meta["producers"]:
        log = _client_log(Path(recording), p["name"])
        listed = [((stamp_ms(r.stamp, offset) - origin) / 1000,
                   "in the publish list" if any(q.broker_name == broker for q in r.queue_datas)
                   else "not in the publish list")
                  for r in log.route_changes if r.topic == meta["topic"]]
        spans(f"{p['name']}'s route", listed[1:], "in the publish list")
    return pd.DataFrame(rows)


def live_modes_frame(live: Mapping[str, tuple[Path, Path]],
                     results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The producers of the ``producer-modes`` recordings (issue 45), one row per line and
    producer: how it sends, its sends, how many failed (the call threw), how many failed at
    their key's queue on a stopped broker (an ordered producer's), how many oneway messages
    no broker stored, the keys whose queue moved at each route change, and the unexplained
    ones (``check_recording``'s ``results`` of the recordings in ``live``)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import read_sends

    rows = []
    for name in sorted(k for k in results if k.startswith("producer-modes")):
        meta = _recording(live[name][0])
        for p in meta["producers"]:
            s = results[name]["producers"][p["name"]]
            sent = read_sends(live[name][0] / "sends" / f"{p['name']}.jsonl.gz",
                              p.get("mode", "sync"))
            moved = ", ".join(f"{m['moved']} of {m['keys']}" for m in s.get("keys_moved", ()))
            rows.append({"line": meta["client_version"], "producer": p["name"],
                         "mode": p.get("mode", "sync"),
                         "fault tolerance": "on" if p["fault_tolerance"] else "off",
                         "sends": s["sends"], "failed": sum("error" in r for r in sent),
                         "failed at a stopped broker": s.get("failed_stopped", 0),
                         "not stored": s.get("written_not_stored", 0),
                         "keys moved": moved or "", "unexplained": s["unexplained"]})
    return pd.DataFrame(rows)


def live_threads_frame(live: Mapping[str, tuple[Path, Path]],
                       results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The producers of the ``producer-threads`` recordings (issue 45), one row per line and
    producer: how it sends, its threads, its sends, how many failed, the routes its client
    logged (``route_changes``: the first included, and any logged after its last send), the
    route versions whose counters were inferred, the sends from which a thread's counter was
    inferred, how many of its threads had a logged failed attempt that fit another thread as
    well (``by_thread``: a 4.9.8 line names no thread; such a thread is checked with
    ``logs_complete`` off), the unexplained ones (``check_recording``'s ``results``, each
    thread with its own counter) and the unexplained ones when the same recording is checked
    as one thread's sends (``split_threads=False``: one counter for all)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import check_recording, read_sends

    rows = []
    for name in sorted(k for k in results if k.startswith("producer-threads")):
        meta = _recording(live[name][0])
        one = check_recording(*live[name], split_threads=False)
        for p in meta["producers"]:
            s = results[name]["producers"][p["name"]]
            mode = p.get("mode", "sync")
            sent = read_sends(live[name][0] / "sends" / f"{p['name']}.jsonl.gz", mode,
                              p.get("threads", 1))
            rows.append({"line": meta["client_version"], "producer": p["name"], "mode": mode,
                         "threads": p.get("threads", 1), "sends": s["sends"],
                         "failed": sum("error" in r for r in sent),
                         "routes logged": s["route_changes"],
                         "routes inferred": s["inferred_routes"],
                         "counter inferred": s["inferred"],
                         "threads sharing failures": s["threads_sharing_failures"],
                         "unexplained": s["unexplained"],
                         "unexplained as one thread":
                             one["producers"][p["name"]]["unexplained"]})
    return pd.DataFrame(rows)


def live_async_frame(live: Mapping[str, tuple[Path, Path]],
                     results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The producers of the ``producer-async`` recordings (issue 45), one row per line and
    producer: its sends, the executor ``threads`` that made first hops, the messages stored on
    another broker than their first hop's (``retried``), how many of those sit at their first
    hop's queue id (``at first queue``), how many the check ``predicted`` exactly (the executor
    thread selected the retry: 4.9.8) or held to the queue id alone (``elsewhere``:
    ``RETRY_ELSEWHERE``), the sends that ``failed``, those of them answered by a broker's flow
    control (``busy``: ``FAILED_BROKER_ERROR`` with code 2, ``[TIMEOUT_CLEAN_QUEUE]``), the
    ``unexplained`` ones (``check_recording``'s ``results``), the unexplained ones when every
    first hop is read as one executor thread's (``as one thread``: one counter), the longest a
    message stored at its first hop while broker-a was paused took (``paused max (ms)``, its
    ``cost_ms``), and how long after broker-b's kill the latest first hop of an ``elsewhere``
    message began (``after kill (ms)``; none: 0)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import read_sends, recording_route
    from rocketlb_core.trace.async_agreement import (
        AGREE,
        FAILED_BROKER_ERROR,
        RETRY_ELSEWHERE,
        async_agreement,
    )
    from rocketlb_core.trace.clientlog import read_client_log, stamp_ms
    from rocketlb_core.trace.importer import log_offset
    from rocketlb_core.trace.ordered_agreement import stopped_spans

    rows = []
    for name in sorted(k for k in results if k.startswith("producer-async")):
        rec = live[name][0]
        meta = _recording(rec)
        origin = meta["t0_ms"]
        offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
        pause = stopped_spans(meta["events"], origin, ("pause",)).get("broker-a", [])
        kill = min((int(e["wall_ms"]) for e in meta["events"] if e["action"] == "kill"),
                   default=0)
        for p in meta["producers"]:
            s = results[name]["producers"][p["name"]]
            sent = read_sends(rec / "sends" / f"{p['name']}.jsonl.gz", "async")
            verdicts = {c["seq"]: c["verdict"] for c in s["others"]}
            retried = [r for r in sent if "broker" in r and "first_broker" in r
                       and r["broker"] != r["first_broker"]]
            log = read_client_log(rec / "logs" / p["name"] / "rocketmq_client.log.gz")
            changes = [(stamp_ms(c.stamp, offset) - origin, c.queue_datas)
                       for c in log.route_changes if c.topic == meta["topic"]]
            one = async_agreement(
                [dict(r, executor="one") if "executor" in r else r for r in sent],
                line=meta["client_version"], topic=meta["topic"], route=recording_route(meta),
                route_changes=changes, origin_ms=origin,
                stopped=stopped_spans(meta["events"], origin),
                killed=stopped_spans(meta["events"], origin, ("kill",))).summary()
            paused = [int(r["cost_ms"]) for r in sent
                      if r.get("first_broker") == "broker-a" and r.get("broker") == "broker-a"
                      and any(lo <= int(r["first_ms"]) - origin <= hi for lo, hi in pause)]
            elsewhere = [r for r in retried if verdicts.get(r["seq"]) == RETRY_ELSEWHERE]
            busy = [r for r in sent if verdicts.get(r["seq"]) == FAILED_BROKER_ERROR
                    and "CODE: 2 " in r["error"] and "[TIMEOUT_CLEAN_QUEUE]" in r["error"]]
            rows.append({
                "line": meta["client_version"], "producer": p["name"], "sends": s["sends"],
                "threads": s["threads"], "retried": len(retried),
                "at first queue": sum(r["queue"] == r["first_queue"] for r in retried),
                "predicted": sum(verdicts.get(r["seq"], AGREE) == AGREE for r in retried),
                "elsewhere": len(elsewhere),
                "failed": sum("error" in r for r in sent), "busy": len(busy),
                "unexplained": s["unexplained"], "as one thread": one["unexplained"],
                "paused max (ms)": max(paused, default=0),
                "after kill (ms)": max((int(r["first_ms"]) - kill for r in elsewhere),
                                       default=0)})
    return pd.DataFrame(rows)


def live_broadcast_frame(live: Mapping[str, tuple[Path, Path]],
                         results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The members of the ``broadcasting`` recordings (issue 45), one row per line and member:
    its group's ``listener``, when it ``joined`` and when it ``took`` its last queue (seconds
    after the producer started: the join event, the latest ``add a new mq`` line), the lock
    ``refusals`` it logged (``LOCK_HELD``), the messages it ``read`` (``ranges/``), those
    stored before it took each queue (``not its to read``: its first offsets, summed), and the
    ``unexplained`` items (``check_recording``'s ``results``)."""
    import pandas as pd

    from rocketlb_core.trace.broadcast_agreement import read_ranges
    from rocketlb_core.trace.clientlog import QueueAdded, read_queue_events, stamp_ms
    from rocketlb_core.trace.importer import log_offset

    rows = []
    for name in sorted(k for k in results if k.startswith("broadcasting")):
        rec = live[name][0]
        meta = _recording(rec)
        t0 = int(meta["t0_ms"])
        offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
        joined = {e["target"]: int(e["wall_ms"]) - t0 for e in meta["events"]
                  if e["action"] == "join"}
        for k in meta["consumers"]:
            c = results[name]["consumers"][k["name"]]
            added = [stamp_ms(e.stamp, offset) - t0
                     for e in read_queue_events(rec / "logs" / k["name"] /
                                                "rocketmq_client.log.gz")
                     if isinstance(e, QueueAdded) and e.outcome == "added"]
            ranges = read_ranges(rec / "ranges" / f"{k['name']}.json")
            rows.append({"line": meta["client_version"], "member": k["name"],
                         "listener": c["listener"], "joined (s)": joined[k["name"]] / 1000,
                         "took (s)": max(added) / 1000, "refusals": c["lock_held"],
                         "read": sum(n for _, _, n in ranges.values()),
                         "not its to read": sum(f for f, _, _ in ranges.values()),
                         "unexplained": c["unexplained"]})
    return pd.DataFrame(rows).round({"joined (s)": 1, "took (s)": 1})


def live_orderly_frame(live: Mapping[str, tuple[Path, Path]]) -> pd.DataFrame:
    """The ``orderly-locks`` recordings (issue 45), one row per line: what
    ``trace.lock_agreement.check_orderly`` found of the group ``GID_ord``. The brokers' lock
    lines by kind (*granted*: no lock held; *refused*: another member's was live; *expired*:
    taken over a lock 60 s old; *unlocked*), the member's refused creations, the crashed
    member's queue (*its queue*: the one taken over an expired lock), how long after the crash
    its taker created it (*crash to grant (s)*, from the taker's own ``add a new mq`` line) and
    how many times the taker was refused it from the crash on (its ``because lock failed``
    lines), the messages a member consumed on its own lock while a restarted broker held none
    (*after the kill*), the messages consumed and stored, the offsets consumed twice, and the
    unexplained items."""
    import pandas as pd

    from rocketlb_core.trace.lock_agreement import check_orderly

    rows = []
    for name in sorted(k for k in live if k.startswith("orderly-locks")):
        rec = live[name][0]
        meta = _recording(rec)
        got = check_orderly(rec)["GID_ord"]
        crash = next(e for e in meta["events"] if e["action"] == "crash")
        crash_s = (int(crash["wall_ms"]) - int(meta["t0_ms"])) / 1000
        expired = [x for x in got["timeline"] if x["detail"].startswith("expired")]
        queue = expired[0]["queue"] if expired else ""
        taker = expired[0]["member"] if expired else ""
        # when the taker created the queue (its own line, to the ms), and how often it was
        # refused the queue from the crash on (its refused creations)
        taken = [x["s"] for x in got["client"] if x["kind"] == "added"
                 and x["queue"] == queue and x["member"] == taker and x["s"] > crash_s]
        rows.append({
            "line": meta["client_version"], "granted": got["grant_free"],
            "refused": got["refused_held"], "expired": got["grant_expired"],
            "unlocked": got["unlocked"], "creations refused": got["refused_seen"],
            "its queue": queue.removeprefix("broker-"),
            "crash to grant (s)": round(taken[0] - crash_s, 1) if taken else None,
            "refused meanwhile": sum(1 for x in got["client"] if x["kind"] == "refused"
                                     and x["queue"] == queue and x["member"] == taker
                                     and x["s"] > crash_s),
            "after the kill": got["cached_messages"], "consumed": got["consumed"],
            "stored": got["stored"], "twice": got["repeated"],
            "unexplained": got["unexplained"]})
    return pd.DataFrame(rows)


def live_back_pressure_frame(live: Mapping[str, tuple[Path, Path]],
                             results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The ``async-back-pressure`` recordings (issue 45; 5.3.3 and 5.5.0), one row per line and
    producer: its permits (``backPressureForAsyncSendNum``; none: back pressure off), its
    sends, those it called while broker-a was paused, those stored, those that failed for want
    of a permit (``BACK_PRESSURE``), at a stopped broker (``FAILED_STOPPED``) or with a
    broker's error reply (``FAILED_BROKER_ERROR``), those retried at another broker
    (``RETRY_ELSEWHERE``), the longest gap between two of its calls less its pause (how long
    ``send`` blocked, and any stall of the driver or the host), when its last call came
    (seconds after the clock started), and the unexplained sends; ``results`` are
    ``check_recording``'s per recording."""
    import gzip
    import json
    from itertools import pairwise

    import pandas as pd

    rows = []
    for name in sorted(k for k in live if k.startswith("async-back-pressure")):
        rec = live[name][0]
        meta = _recording(rec)
        t0 = int(meta["t0_ms"])
        pause = next(e for e in meta["events"] if e["action"] == "pause")
        resume = next(e for e in meta["events"] if e["action"] == "resume"
                      and e["target"] == pause["target"])
        for p in meta["producers"]:
            got = results[name]["producers"][p["name"]]
            sent = [json.loads(x) for x in gzip.decompress(
                (rec / "sends" / f"{p['name']}.jsonl.gz").read_bytes()).splitlines()
                if b'"seq"' in x]
            calls = sorted(int(r["sent_ms"]) for r in sent)
            waits = [b - a - int(p["interval_ms"]) for a, b in pairwise(calls)]
            rows.append({
                "line": meta["client_version"], "producer": p["name"],
                "permits": p.get("back_pressure") or "off", "sends": got["sends"],
                "called in the pause": sum(int(pause["wall_ms"]) <= int(r["sent_ms"])
                                           < int(resume["wall_ms"]) for r in sent),
                "stored": sum("broker" in r for r in sent),
                "no permit": got.get("back_pressure", 0),
                "failed, broker stopped": got["failed_stopped"],
                "failed, broker busy": got["failed_broker_error"],
                "retried elsewhere": got["retry_elsewhere"],
                "longest gap (ms)": max(waits, default=0),
                "last call (s)": round((calls[-1] - t0) / 1000, 1),
                "unexplained": got["unexplained"]})
    return pd.DataFrame(rows)


SLAVE_PHASES = ("slave connected", "slave paused", "slave resumed", "slave killed",
                "slave restarted")
"""The ``slave-statuses`` scenario's stretches, each from one event on slave-a to the next."""


def live_slave_reads_frame(live: Mapping[str, tuple[Path, Path]]) -> pd.DataFrame:
    """The ``slave-reads`` recordings (issue 45; question #2485): broker-a a ``SYNC_MASTER``
    with slave-a, killed while a producer sends, restarted later, and two members that join
    after the kill, ``c1`` (concurrently) and ``o1`` (orderly). One row per line (named by its
    broker's release) and member: broker-a's messages it consumed (stored before the kill, on
    slave-a too), the seconds from the kill to its first one and from the restart to it
    (negative: before the restart), its messages of broker-b, and the sends and assignments the
    check left unexplained (``trace.agreement.check_recording``; the lock check's for ``o1``).
    ``attrs["route_dropped_s"]``: per line, seconds from the kill to the producer's route
    change that listed broker-a without its master (``None``: none logged);
    ``attrs["failed_attempts"]``: per line, the producer's logged failed attempts at broker-a
    before that; ``attrs["stored"]``: per line, the producer's sends that were stored."""
    import pandas as pd

    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.clientlog import read_client_log, stamp_ms
    from rocketlb_core.trace.importer import log_offset
    from rocketlb_core.trace.lock_agreement import check_orderly, read_consumes

    rows: list[dict[str, Any]] = []
    dropped: dict[str, float | None] = {}
    failed: dict[str, int] = {}
    stored: dict[str, int] = {}
    for name in sorted(k for k in live if k.startswith("slave-reads")):
        rec, trace = live[name]
        meta = _recording(rec)
        line = meta["server_version"]
        at = {e["action"]: int(e["wall_ms"]) for e in meta["events"] if e["target"] == "broker-a"}
        kill, restart = at["kill"], at["restart"]
        checked = check_recording(rec, trace)
        locks = check_orderly(rec)
        offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
        log = read_client_log(rec / "logs" / "p-steady" / "rocketmq_client.log.gz")
        gone = [stamp_ms(r.stamp, offset) for r in log.route_changes
                if r.topic == meta["topic"] and "broker-a" in r.masterless]
        dropped[line] = round((min(gone) - kill) / 1000, 1) if gone else None
        failed[line] = sum(f.queue.broker_name == "broker-a"
                           and (not gone or stamp_ms(f.stamp, offset) <= min(gone))
                           for f in log.send_failures)
        stored[line] = sum("error" not in r for r in _sends_rows(rec, "p-steady"))
        queues = [f"{r['broker_name']}/{q}" for r in meta["route"]
                  for q in range(int(r["read_queue_nums"]))]
        for k in meta["consumers"]:
            got = read_consumes(rec / "consumes" / f"{k['name']}.jsonl.gz", queues)
            a = [t for q, _, t in got if q.startswith("broker-a/")]
            unexplained = (locks.get(k["group"], {}).get("unexplained", 0)
                           + checked["consumers"].get(k["name"], {}).get("unexplained", 0))
            rows.append({"line": line, "member": k["name"],
                         "listener": k.get("listener", "concurrently"),
                         "broker-a messages": len(a),
                         "first after the kill (s)": round((min(a) - kill) / 1000, 1)
                         if a else None,
                         "first after the restart (s)": round((min(a) - restart) / 1000, 1)
                         if a else None,
                         "broker-b messages": sum(q.startswith("broker-b/") for q, _, _ in got),
                         "unexplained": unexplained
                         + checked["producers"]["p-steady"]["unexplained"]})
    out = pd.DataFrame(rows)
    out.attrs["route_dropped_s"] = dropped
    out.attrs["failed_attempts"] = failed
    out.attrs["stored"] = stored
    return out


def live_slave_frame(live: Mapping[str, tuple[Path, Path]]) -> pd.DataFrame:
    """The ``slave-statuses`` recordings (issue 45): broker-a a ``SYNC_MASTER`` with slave-a,
    broker-b an ``ASYNC_MASTER``; one row per line (named by its broker's release, whose
    behaviour this is) and stretch of slave-a's (``SLAVE_PHASES``, from the recording's
    events). Per stretch: the sends the two producers began in it,
    p-plain's sends answered ``SLAVE_NOT_AVAILABLE`` (its switch off: the reply returned),
    the sends that failed (both producers: a timeout at broker-a, whose copy it stored anyway),
    the messages of either producer stored in two queues (the topic's dump: p-retry's
    ``retryAnotherBrokerWhenNotStoreOK`` after broker-a's status, or a timed-out attempt's copy
    beside the copy of a later attempt, even of a send that failed) and the sends the check left
    unexplained (``trace.agreement.check_recording``, with the dump: ``STATUS_COPY``). The
    frame's ``attrs["first_status_s"]`` holds, per line, how long after the pause p-plain's first
    send answered ``SLAVE_NOT_AVAILABLE`` began, ``attrs["last_status_after_restart_s"]`` how
    long after slave-a's restart its last one began (``None``: none), and
    ``attrs["first_report_s"]`` the seconds from each slave connection broker-a logged to the
    slave's first offset report (4.x; ``_slave_report_delays``); per line too, p-retry's
    stored sends with a second copy (``retry_twice``), the failed sends of either producer with
    two copies (``failed_twice``), how long slave-a's restart took until the name server listed
    it (``restart_s``), whether that was after the producers' last call
    (``back_after_sends``), and whether every send that failed while slave-a was paused began
    before the first ``SLAVE_NOT_AVAILABLE`` (``paused_failures_before_status``)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import check_recording, copies_by_seq, stored_copies

    rows: list[dict[str, Any]] = []
    first: dict[str, float | None] = {}
    last: dict[str, float | None] = {}
    report: dict[str, list[int]] = {}
    retry_twice: dict[str, int] = {}
    failed_twice: dict[str, int] = {}
    restart_s: dict[str, float] = {}
    back_after_sends: dict[str, bool] = {}
    before_status: dict[str, bool] = {}
    for name in sorted(k for k in live if k.startswith("slave-statuses")):
        rec, trace = live[name]
        meta = _recording(rec)
        t0 = int(meta["t0_ms"])
        edges = [t0] + [int(e["wall_ms"]) for e in meta["events"]
                        if e["target"] == "slave-a"] + [2**62]
        if len(edges) != len(SLAVE_PHASES) + 1:
            raise ValueError(f"{rec}: four events on slave-a expected")
        checked = check_recording(rec, trace)["producers"]
        others = {n: {c["seq"] for c in v["others"] if c["verdict"] == "unexplained"}
                  for n, v in checked.items()}
        sends = {p["name"]: _sends_rows(rec, p["name"]) for p in meta["producers"]}
        dump = stored_copies(rec / "topic.jsonl.gz")
        twice = {n: copies_by_seq(dump, n) for n in sends}
        line = meta["server_version"]          # the broker's behaviour (4.9.7 on line 4)
        retry_twice[line] = sum(len(set(twice["p-retry"].get(r["seq"], ()))) > 1
                                for r in sends["p-retry"] if "error" not in r)
        failed_twice[line] = sum(len(set(twice[n].get(r["seq"], ()))) > 1
                                 for n, v in sends.items() for r in v if "error" in r)
        restarted = next(e for e in meta["events"] if e["target"] == "slave-a"
                         and e["action"] == "restart")
        restart_s[line] = round((int(restarted["done_ms"]) - int(restarted["wall_ms"])) / 1000, 1)
        last_send = max(int(r["sent_ms"]) for v in sends.values() for r in v)
        back_after_sends[line] = int(restarted["done_ms"]) > last_send
        statuses = [int(r["sent_ms"]) for r in sends["p-plain"]
                    if r.get("status") == "SLAVE_NOT_AVAILABLE" and int(r["sent_ms"]) >= edges[1]]
        first[line] = round((min(statuses) - edges[1]) / 1000, 1) if statuses else None
        after = [t for t in statuses if t >= edges[4]]
        failed_in_pause = [int(r["sent_ms"]) for v in sends.values() for r in v
                           if "error" in r and edges[1] <= int(r["sent_ms"]) < edges[2]]
        before_status[line] = all(t < min(statuses) for t in failed_in_pause) if statuses \
            else True
        report[line] = _slave_report_delays(rec / "logs" / "broker-a" / "broker.log.gz")
        last[line] = round((max(after) - edges[4]) / 1000, 1) if after else None
        for k, phase in enumerate(SLAVE_PHASES):
            lo, hi = edges[k], edges[k + 1]

            def within(r: Mapping[str, Any], lo: int = lo, hi: int = hi) -> bool:
                return lo <= int(r["sent_ms"]) < hi

            mine = {n: [r for r in rows_ if within(r)] for n, rows_ in sends.items()}
            rows.append({
                "broker": line, "slave-a": phase,
                "sends": sum(len(v) for v in mine.values()),
                "SLAVE_NOT_AVAILABLE (p-plain)": sum(
                    r.get("status") == "SLAVE_NOT_AVAILABLE" for r in mine["p-plain"]),
                "failed (timeouts)": sum("error" in r for v in mine.values() for r in v),
                "stored twice": sum(len(set(twice[n].get(r["seq"], ()))) > 1
                                    for n, v in mine.items() for r in v),
                "unexplained": sum(r["seq"] in others[n] for n, v in mine.items() for r in v)})
    frame = pd.DataFrame(rows)
    frame.attrs["first_status_s"] = first
    frame.attrs["last_status_after_restart_s"] = last
    frame.attrs["first_report_s"] = report
    frame.attrs["retry_twice"] = retry_twice
    frame.attrs["failed_twice"] = failed_twice
    frame.attrs["restart_s"] = restart_s
    frame.attrs["back_after_sends"] = back_after_sends
    frame.attrs["paused_failures_before_status"] = before_status
    return frame


def _slave_report_delays(log: Path) -> list[int]:
    """Seconds from each slave connection a 4.x master logged (``HAService receive new
    connection, /ADDR``) to that connection's first offset report (``slave[/ADDR] request
    offset``), both stamped to the second; none for a log that is not there (5.x writes them
    to ``store.log``, in another form)."""
    import gzip
    import re
    from datetime import datetime

    if not log.is_file():
        return []
    stamp = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
    accepted: dict[str, str] = {}
    out = []
    for ln in gzip.decompress(log.read_bytes()).decode("utf-8", "replace").splitlines():
        m = stamp.match(ln)
        if m is None:
            continue
        if (a := re.search(r"HAService receive new connection, (/\S+)", ln)) is not None:
            accepted[a[1]] = m[1]
        elif (r := re.search(r"slave\[(/\S+)\] request offset", ln)) is not None \
                and r[1] in accepted:
            t = (datetime.fromisoformat(m[1]) - datetime.fromisoformat(accepted.pop(r[1])))
            out.append(int(t.total_seconds()))
    return out


def _sends_rows(recording: Path, producer: str) -> list[dict[str, Any]]:
    """A live producer's rows (``sends/<producer>.jsonl.gz``), as the check reads them."""
    from rocketlb_core.trace.agreement import read_sends

    return [r for r in read_sends(Path(recording) / "sends" / f"{producer}.jsonl.gz")
            if "seq" in r]


def live_lite_pull_frame(live: Mapping[str, tuple[Path, Path]],
                         results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The ``lite-pull`` recordings (issue 45), one row per line and member of the group: its
    ``kind`` (push, lite-pull subscribing, or lite-pull assigning itself queues), the queues it
    held just before the assigning member left (``while assigned``: its last logged rebalance
    result by then; the assigning member's own queues) and when the scenario ended, before the
    recorder stopped the consumers (``after``: ``check_recording``'s ``held_at_end``), how many
    members the broker's list counted at that moment (``counted``: ``cidAllSize``), and, per
    line, the queues no member held meanwhile (``read by nobody``, the same on each of its
    rows); queues are written without their ``broker-`` prefix (``a/0``)."""
    import pandas as pd

    from rocketlb_core.model import subscribe_queues
    from rocketlb_core.trace.agreement import recording_route
    from rocketlb_core.trace.clientlog import read_client_log, stamp_ms
    from rocketlb_core.trace.importer import log_offset

    rows = []
    for name in sorted(k for k in results if k.startswith("lite-pull")):
        rec = live[name][0]
        meta = _recording(rec)
        offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
        assigners = [k for k in meta["consumers"] if k.get("assign")]
        left = min(int(e["wall_ms"]) for e in meta["events"]
                   if e["action"] == "leave" and e["target"] in {k["name"] for k in assigners})
        everything = {q.short() for q in subscribe_queues(meta["topic"], recording_route(meta))}
        mine = []
        for k in meta["consumers"]:
            logged = [r for r in read_client_log(rec / "logs" / k["name"] /
                                                 "rocketmq_client.log.gz").rebalances
                      if r.topic == meta["topic"]]
            before = [r for r in logged if stamp_ms(r.stamp, offset) < left]
            held = (set(k["assign"]) if k.get("assign") else
                    {q.short() for q in before[-1].result} if before else set())
            after = set(results[name]["consumers"][k["name"]]["held_at_end"])
            def short(queues: set[str]) -> str:
                return " ".join(sorted(q.removeprefix("broker-") for q in queues))

            mine.append({"line": meta["client_version"], "member": k["name"],
                         "kind": k.get("kind", "push") + (" (assign)" if k.get("assign")
                                                          else ""),
                         "while assigned": short(held),
                         "counted": before[-1].cid_all_size if before else None,
                         "after": short(after)})
        held_all = {f"broker-{q}" for r in mine for q in r["while assigned"].split()}
        for r in mine:
            r["read by nobody"] = short(everything - held_all)
        rows += mine
    return pd.DataFrame(rows).astype({"counted": "Int64"})


def lite_pull_reads(recording: Path | str, queue: str) -> dict[str, Any]:
    """What the members of a ``lite-pull`` recording read of two queues (their ``ranges/``):
    ``queue`` (``"broker-a/1"``) as ``c1`` read it, with how many messages it held at the end
    (``stored``: the broker offset ``consumerProgress`` gave, ``progress/GID_lp.txt``), and
    ``broker-a/0``, which ``a1`` assigned itself, as ``a1`` and ``c1`` read it: ``[first,
    last, count]`` each, and ``both``: how many offsets more than its span they read between
    them (read twice, at least)."""
    from rocketlb_core.doctor.inputs import _Bad, read_progress
    from rocketlb_core.trace.broadcast_agreement import read_ranges

    rec = Path(recording)
    read = {m: read_ranges(rec / "ranges" / f"{m}.json") for m in ("c1", "a1")}
    broker, _, qid = queue.rpartition("/")
    progress = read_progress(rec / "progress" / "GID_lp.txt", _Bad(False, []))
    stored = next(r.broker_offset for r in progress.rows
                  if r.broker == broker and r.queue_id == int(qid))
    (af, al, an), (cf, cl, cn) = read["a1"]["broker-a/0"], read["c1"]["broker-a/0"]
    return {"stored": stored, "c1": list(read["c1"].get(queue, ())),
            "a1_own": [af, al, an], "c1_own": [cf, cl, cn],
            "both": an + cn - (max(al, cl) - min(af, cf) + 1)}


def batches_stored(recording: Path | str, producer: str) -> dict[str, int]:
    """A batch producer's sends (``send(Collection)``, bodies ``m<seq>.<k>``) against the
    topic's dump of a live recording: the batches the client saw stored, how many of them the
    dump holds whole at consecutive offsets of the queue the ``SendResult`` named, how many
    it holds whole on another queue as well (an attempt the client timed out on a paused
    broker, stored at its resume, the batch sent again elsewhere), the batches whose send
    failed and how many of those it holds whole all the same, and the batches (stored or
    failed) with a message stored anywhere outside such a whole copy."""
    import gzip
    import json

    from rocketlb_core.trace.agreement import read_sends

    meta = _recording(recording)
    (p,) = (x for x in meta["producers"] if x["name"] == producer)
    at: dict[str, list[tuple[str, int, int]]] = {}
    for x in map(json.loads, gzip.decompress(
            (Path(recording) / "topic.jsonl.gz").read_bytes()).splitlines()):
        at.setdefault(str(x["body"]), []).append((x["broker"], x["queue"], x["offset"]))
    stored = whole = elsewhere = failed = failed_stored = partial = 0
    for r in read_sends(Path(recording) / "sends" / f"{producer}.jsonl.gz", "batch",
                        p.get("threads", 1)):
        bodies = [f"m{r['seq']}.{k}" for k in range(r["batch"])]
        # the queues holding the whole batch at consecutive offsets
        copies = {(b, q) for b, q, o in at.get(bodies[0], [])
                  if all((b, q, o + k) in at.get(m, []) for k, m in enumerate(bodies))}
        partial += any((b, q) not in copies for m in bodies for b, q, _ in at.get(m, []))
        if "error" in r:
            failed += 1
            failed_stored += bool(copies)
            continue
        stored += 1
        named = (r["broker"], r["queue"])
        whole += named in copies
        elsewhere += bool(copies - {named})
    return {"stored": stored, "whole": whole, "elsewhere": elsewhere, "failed": failed,
            "failed_stored": failed_stored, "partial": partial}


def oneway_during_pause(recording: Path | str, producer: str, broker: str
                        ) -> dict[str, int]:
    """A oneway producer's calls made while ``broker`` was surely paused (from the pause's
    return to the resume's start), from a live recording with the topic's dump: how many,
    the longest call (ms), how many the dump found on ``broker``, and how many of those were
    stored before the resume began (none, if the broker stored nothing while paused)."""
    import gzip
    import json

    meta = _recording(recording)
    ev = {(e["action"], e["target"]): e for e in meta["events"]}
    lo, hi = ev[("pause", broker)]["done_ms"], ev[("resume", broker)]["wall_ms"]
    stored = {x["body"]: x for x in map(json.loads, gzip.decompress(
        (Path(recording) / "topic.jsonl.gz").read_bytes()).splitlines())
        if str(x.get("body", "")).startswith(f"{producer}/")}
    calls = [json.loads(x) for x in gzip.decompress(
        (Path(recording) / "sends" / f"{producer}.jsonl.gz").read_bytes()).splitlines()]
    during = [r for r in calls if lo < int(r["sent_ms"]) < hi]
    there = [stored[f"{producer}/m{r['seq']}"] for r in during
             if stored.get(f"{producer}/m{r['seq']}", {}).get("broker") == broker]
    return {"calls": len(during), "longest_call_ms": max(int(r.get("cost_ms", 0))
                                                          for r in during),
            "on_broker": len(there),
            "stored_before_resume": sum(int(x["store_ms"]) < hi for x in there)}


def live_agreement_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The model against live recordings (``trace.agreement.check_recording`` results by
    recording name): one row per producer (sends) and per consumer (logged assignments; a
    broadcasting member's ``items``: its sets, creations and reads). A
    consumer's ``agree`` counts every logged assignment the check matched: exactly, near a
    change, or on the list one broker held then (a broker's own view)."""
    import pandas as pd

    rows = []
    for name, r in results.items():
        for p, s in r["producers"].items():
            rows.append({"recording": name, "client": p, "checked": "sends",
                         "total": s["sends"], "agree": s["agree"],
                         "counter drawn at random": s["inferred"] + s["reset"],
                         "in flight": s["in_flight"],
                         # a oneway call no broker stored, at a killed broker (issue 45)
                         "not stored": s.get("written_not_stored", 0),
                         "unexplained": s["unexplained"]})
        for k, s in r["consumers"].items():
            if s.get("model") == "broadcasting":
                # a broadcasting member allocates nothing: its sets, creations and reads
                rows.append({"recording": name, "client": k, "checked": "items",
                             "total": s["items"],
                             "agree": s["agree"] + s["lock_held"] + s["start_agree"]
                             + s["nothing_after"],
                             "counter drawn at random": 0, "in flight": 0, "not stored": 0,
                             "unexplained": s["unexplained"]})
                continue
            rows.append({"recording": name, "client": k, "checked": "assignments",
                         "total": s["logged"],
                         # on a list a broker held then (trace.agreement.STALE_VIEW) agrees too
                         "agree": s["exact"] + s["near_change"] + s.get("stale_view", 0),
                         "counter drawn at random": 0, "in flight": 0, "not stored": 0,
                         "unexplained": s["unexplained"]})
    return pd.DataFrame(rows)


def live_soak_frame(soaks: Sequence[Path | str],
                    results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The shipped recordings beside random scenarios nobody wrote (issue 32): per client line,
    one row summing ``results`` (``check_recording`` of the shipped recordings, their line read
    from the client version) and one per soak file (``bench/live_soak.py``'s ``soak.json``,
    kept in ``data/live/soak/``): scenarios, sends and how the check matched them, logged
    assignments and how many it explained, and the worst lateness of an event. A scenario whose
    recording failed counts under ``failed``; its sends are not in the sums. The shipped rows
    are ``results``, computed now; a soak's rows are the counts its file kept, as the check
    stood when that soak was last rechecked (``bench/live_soak.py --recheck``): the soak's
    recordings are not kept, so nothing here checks them again."""
    import json

    import pandas as pd

    def row(line: str, what: str, n: int, failed: int, sends: list[Mapping[str, Any]],
            assigned: list[Mapping[str, Any]], late: int | None) -> dict[str, Any]:
        def tot(xs: list[Mapping[str, Any]], k: str) -> int:
            return sum(int(x.get(k, 0)) for x in xs)
        return {"line": line, "scenarios": what, "count": n, "failed": failed,
                "sends": tot(sends, "sends"), "determined": tot(sends, "determined"),
                "agree": tot(sends, "agree"),
                "drawn at random": tot(sends, "inferred") + tot(sends, "reset"),
                "in flight": tot(sends, "in_flight"),
                "sends unexplained": tot(sends, "unexplained"),
                "assignments": tot(assigned, "logged"),
                "explained": tot(assigned, "exact") + tot(assigned, "near_change")
                + tot(assigned, "stale_view"),
                "assignments unexplained": tot(assigned, "unexplained"),
                "max late (ms)": late}

    def live_line(client_version: str) -> str:
        """The live line (``live.jars.LINES``) of a recording's client version."""
        return "5.5" if client_version.startswith("5.5.") else client_version[0]

    rows = []
    soaked = [json.loads(Path(p).read_text(encoding="utf-8")) for p in soaks]
    for line in sorted({live_line(str(r["line"])) for r in results.values()}
                       | {str(x["line"]) for s in soaked for x in s["rows"]}):
        mine = [r for r in results.values() if live_line(str(r["line"])) == line]
        if mine:
            rows.append(row(line, "shipped", len(mine), 0,
                            [p for r in mine for p in r["producers"].values()],
                            [c for r in mine for c in r["consumers"].values()], None))
        for s in soaked:
            xs = [x for x in s["rows"] if str(x["line"]) == line]
            if xs:
                ok = [x for x in xs if "error" not in x]
                rows.append(row(line, f"soak {s['seed']}", len(xs),
                                len(xs) - len(ok),
                                [p for x in ok for p in x["producers"].values()],
                                [x["consumers"] for x in ok],
                                max((int(x.get("max_late_ms") or 0) for x in ok), default=0)))
    return pd.DataFrame(rows).astype({"max late (ms)": "Int64"})   # none: shipped


def live_soak_kinds_frame(soaks: Sequence[Path | str]) -> pd.DataFrame:
    """Per soak file that keeps its scenarios' kinds (``bench/live_soak.py --export``, issue 45)
    and line: how many scenarios held each of ``live.record.KINDS`` (a kind none held is left
    out), beside the scenarios and how many failed to record."""
    import json

    import pandas as pd

    from rocketlb_core.live.record import KINDS

    rows = []
    for p in soaks:
        soak = json.loads(Path(p).read_text(encoding="utf-8"))
        if not all("kinds" in r for r in soak["rows"]):
            continue
        for line in sorted({str(r["line"]) for r in soak["rows"]}):
            mine = [r for r in soak["rows"] if str(r["line"]) == line]
            rows.append({"line": line, "soak": f"soak {soak['seed']}", "scenarios": len(mine),
                         "failed": sum("error" in r for r in mine),
                         **{k: sum(k in r["kinds"] for r in mine) for k in KINDS}})
    frame = pd.DataFrame(rows)
    return frame.loc[:, [c for c in frame.columns if c not in KINDS or frame[c].any()]] \
        if rows else frame


def live_consumers_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """One row per consumer of a ``check_recording`` result: its group, the assignments it
    logged and how they were matched, and the queues it held when the scenario ended."""
    import pandas as pd

    return pd.DataFrame([
        {"consumer": name, "group": c["group"], "logged": c["logged"], "exact": c["exact"],
         "near a change": c["near_change"], "unexplained": c["unexplained"],
         "at the end": c["at_end"],
         "held": " ".join(q.removeprefix("broker-") for q in c["held_at_end"])}
        for name, c in result["consumers"].items()])


def live_failures_frame(live: Mapping[str, tuple[Path, Path]]) -> pd.DataFrame:
    """Failed sends of each real producer against the simulator's prediction for the same
    scenario (``trace.agreement.producer_failures``, five seeds)."""
    import pandas as pd

    from rocketlb_core.trace.agreement import producer_failures

    rows = []
    for name, (recording, _) in sorted(live.items()):
        for r in producer_failures(recording):
            lo, hi = r["simulated_failed_min"], r["simulated_failed_max"]
            rows.append({"recording": name, "producer": r["producer"],
                         "fault tolerance": "on" if r["fault_tolerance"] else "off",
                         "failed, live": r["live_failed"],
                         "failed, simulator": str(lo) if lo == hi else f"{lo} to {hi}"})
    return pd.DataFrame(rows)


def live_kill_frame(live: Mapping[str, tuple[Path, Path]], scenario: Path | str,
                    group: str, consumer: str) -> pd.DataFrame:
    """A killed consumer's queues: how long until a survivor took them over, on the live
    recordings (``trace.agreement.kill_handover``: SIGKILL on a live host), and as the simulator
    predicts it for a process kill and for a vanished host (``sim.experiments.crash_timing`` on
    ``scenario``, crashing ``consumer`` of ``group`` 1 s and 29 s after a heartbeat). The
    vanished-host row is the simulator's alone (no live recording has one): each broker drops
    the channel by its idle close (120 s after the last traffic, notifying the group) or its
    10 s scan (last heartbeat over 120 s old, notifying nobody), whichever comes first."""
    import pandas as pd

    from rocketlb_core.sim.experiments import crash_timing
    from rocketlb_core.sim.scenario import load
    from rocketlb_core.trace.agreement import kill_handover

    rows = []
    for name, (recording, trace) in sorted(live.items()):
        for k in kill_handover(recording, trace):
            taken = k["taken_over_s"]
            rows.append({"what": f"live, {name}",
                         "taken over after (s)": "not seen" if taken is None else f"{taken:g}"})
    sc = load(scenario)
    for mode, label in (("process", "simulator, process killed"),
                        ("host", "simulator, host vanished")):
        times = [r["owned_again_s"] for r in crash_timing(sc, group, consumer, [1_000, 29_000],
                                                          mode=mode)]
        rows.append({"what": label, "taken over after (s)": f"{min(times):g} to {max(times):g}"})
    return pd.DataFrame(rows)


def live_frozen_frame(recording: Path | str) -> pd.DataFrame:
    """The frozen consumers of a live recording (``freeze``: SIGSTOP, a host gone quiet with
    its connections open; issue 45): per consumer and broker, how the broker dropped it and
    when, against the simulator's model (``trace.agreement.frozen_drops``).

    >>> from rocketlb_core import data_path
    >>> f = live_frozen_frame(data_path("live", "frozen-consumers-5"))
    >>> sorted(set(f["dropped by"])), set(f["model"])
    (['idle close', 'scan'], {'agree'})
    """
    import pandas as pd

    from rocketlb_core.trace.agreement import frozen_drops

    return pd.DataFrame([{
        "consumer": r["consumer"], "broker": r["broker"],
        "pulled its queues": "yes" if r["pulled_here"] else "no",
        "dropped by": r["path"],
        "after the freeze (s, logged to the second)": (
            None if r.get("dropped_after_s") is None else round(r["dropped_after_s"])),
        "last heartbeat before the freeze (s)": r.get("heartbeat_before_s"),
        "model": r["verdict"]} for r in frozen_drops(recording)])


def churn_queue_shares(settings: Mapping[str, ReplayConfig], sends: int = 200_000,
                       producers: int = 100, rate: float = 200.0, seed: int = 0
                       ) -> pd.DataFrame:
    """Where each broker's messages went, queue by queue, when conditions churn: a churn trace
    (``rocketlb_core.trace.generate``, ``churn=True``: a new latency per broker every second,
    one slow second in nine, flapping outages) is generated in a temporary folder and
    replayed under each setting (the Python engine). One row per setting, broker and queue
    id: ``share`` of that broker's stored messages (a fair share is one over the queue count).
    The folder is removed before this returns."""
    import tempfile

    import pandas as pd

    from rocketlb_core.replay.engines import replay_producers_python
    from rocketlb_core.trace.generate import generate

    rows = []
    with tempfile.TemporaryDirectory(prefix="rocketlb-churn-") as tmp:
        trace = Path(tmp) / "trace"
        generate(trace, sends, producers, rate, files=1, seed=seed, churn=True)
        for k, (label, config) in enumerate(settings.items()):
            s = replay_producers_python(trace, Path(tmp) / f"replay-{k}", config)
            per_broker = s["stored_by_broker"]
            for label_q, n in s["stored_by_queue"].items():
                broker, qid = label_q.rsplit("/", 1)
                rows.append({"setting": label, "broker": broker, "queue": int(qid),
                             "share": round(n / per_broker[broker], 4)})
    return pd.DataFrame(rows)


def kafka_side_by_side(days: Mapping[str, tuple[Path | str, str]],
                       strategies: Sequence[str] = ("AVG", "STICKY", "kafka-range",
                                                    "kafka-roundrobin", "kafka-sticky",
                                                    "kafka-cooperative-sticky", "kafka-uniform"),
                       seed: int = 0) -> pd.DataFrame:
    """Each recorded day (label -> (trace folder, group)) through RocketMQ's strategies and
    Kafka's assignors (``kafka-*``, on Kafka's view of the group: ``rocketlb_core.kafka.group``)
    with the consumer replay's Python engine, in a temporary folder removed before this
    returns. One row per day and strategy: queues moved, rebalances (RocketMQ: one per change;
    Kafka's cooperative protocol adds a second where partitions move; KIP-848 has none), the
    worst imbalance (most minus fewest queues among live members), unowned and double-owned
    seconds, the most idle members at once, the largest backlog."""
    import tempfile

    import pandas as pd

    from rocketlb_core.replay.consumer_engines import replay_consumers_python

    rows = []
    with tempfile.TemporaryDirectory(prefix="rocketlb-kafka-") as tmp:
        for k, (label, (trace, group)) in enumerate(days.items()):
            out = replay_consumers_python(Path(trace), Path(tmp) / f"day-{k}", group,
                                          list(strategies), seed=seed)
            for name, s in out["strategies"].items():
                rows.append({"day": label, "strategy": name,
                             "system": "Kafka" if name.startswith("kafka-") else "RocketMQ",
                             "queues moved": s["queues_moved"],
                             "rebalances": s.get("rebalances", s["changes"]),
                             "worst imbalance": s["imbalance_max"],
                             "unowned s": round(s["unowned_ms_total"] / 1000, 1),
                             "double-owned s": round(s["double_owned_ms_total"] / 1000, 1),
                             "most idle": s["idle_consumers_max"],
                             "largest backlog": s.get("lag_max", 0)})
    return pd.DataFrame(rows)


def mixed_subscriptions_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """``consumer.compare.mixed_subscriptions`` as two frames: per strategy and topic, the queues
    consumed by nobody; per strategy and member, the queues it consumes (all topics)."""
    import pandas as pd

    from rocketlb_core.consumer.compare import mixed_subscriptions

    rows = mixed_subscriptions()
    label = {r.strategy: f"{r.design}: {r.strategy}" for r in rows}
    unconsumed = pd.DataFrame([{"strategy": label[r.strategy], "topic": r.topic,
                                "queues": r.queues, "consumed by nobody": r.unconsumed}
                               for r in rows])
    seen: set[str] = set()
    loads = []
    for r in rows:
        if r.strategy in seen:
            continue
        seen.add(r.strategy)
        loads += [{"strategy": label[r.strategy], "member": m, "queues consumed": n}
                  for m, n in r.loads]
    return unconsumed, pd.DataFrame(loads)


def mixed_clients_frame(seed: int = 47, count: int = 500) -> pd.DataFrame:
    """Random groups of Java and Go members (issue 47; ``goclient.mixed.agreement_rows``): per
    strategy both clients have, how many end with every queue held once, and how many hold a
    queue twice or leave one to nobody."""
    import pandas as pd

    from rocketlb_core.goclient.mixed import agreement_rows

    return pd.DataFrame(agreement_rows(seed, count))


def live_mixed_clients_frame(results: Mapping[str, Mapping[str, Any]],
                             prefix: str = "mixed-go-java") -> pd.DataFrame:
    """The ``mixed-go-java`` recordings (issue 47), one row per line and group: its strategy,
    its members (``g1 (Go)``), the assignments they logged and how many the model did not
    explain (each member by its own client's model), and when the scenario ended the queues
    held twice and held by nobody (without their ``broker-`` prefix), and the reads beyond one
    an offset over the whole run (``extra reads``; ``check_recording``'s ``groups_at_end``)."""
    import pandas as pd

    rows = []
    for name, r in sorted(results.items()):
        if not name.startswith(prefix):
            continue
        line = r["line"]
        for group, end in sorted(r.get("groups_at_end", {}).items()):
            members = {n: c for n, c in r["consumers"].items() if c.get("group") == group}
            strategy = next((c["strategy"] for c in members.values() if "strategy" in c),
                            "AVG")
            rows.append({
                "line": line, "group": group, "strategy": strategy,
                "members": " ".join(f"{n}{' (Go)' if c.get('language') == 'go' else ''}"
                                    for n, c in members.items()),
                "logged": sum(c["logged"] for c in members.values()),
                "unexplained": sum(c["unexplained"] for c in members.values()),
                "held twice": " ".join(q.removeprefix("broker-") for q in end["held_twice"]),
                "by nobody": " ".join(q.removeprefix("broker-")
                                      for q in end["held_by_nobody"]),
                "extra reads": end["read_twice"]})
    return pd.DataFrame(rows)


def live_grpc_mixed_frame(results: Mapping[str, Mapping[str, Any]],
                          group: str = "GID_mix") -> pd.DataFrame:
    """The ``grpc-remoting-mixed`` recordings (issue 47; ``live.check.check_live_recording``'s
    results by name), one row per line: the members of ``group`` the remoting members counted
    (their logged ``cidAllSize``), the assignments they logged, the gRPC members' logged
    assignments (``A(-1) B(-1)``: every broker's queue -1), how many of either the models left
    unexplained, and the group's stored messages split by who consumed them: both sides, only
    the remoting members, only the gRPC members; the gRPC members' deliveries of a message
    already delivered to one of them (``gRPC again``), and the messages nobody consumed."""
    import pandas as pd

    rows = []
    for _, r in sorted(results.items()):
        g = r["groups"][group]
        remoting = [r["consumers"][n] for n in g["remoting_consumers"]]
        grpc = [r["consumers"][n] for n in g["consumers"]]
        rows.append({
            "line": r["line"], "servers": r["server_version"],
            "remoting counted": " or ".join(str(n) for n in sorted(
                {n for c in remoting for n in c["members_counted"]})),
            "remoting logged": sum(c["logged"] for c in remoting),
            "gRPC assigned": " ".join(sorted(
                f"{b.removeprefix('broker-').upper()}({q})"
                for c in grpc for b, q in c["model_assignment"])),
            "unexplained": sum(c["unexplained"] for c in remoting + grpc) + g["unexplained"],
            "stored": g["stored"], "both": g["consumed_by_both"],
            "remoting only": g["remoting_only"], "gRPC only": g["grpc_only"],
            "gRPC again": g["redelivered"], "nobody": g["missing"]})
    return pd.DataFrame(rows)


def live_pop_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The ``pop-consumers`` recordings (issue 45; ``check_recording``'s results by name), one
    row per line and broker-assigned member: its group and request mode, the assignments it
    logged and how many the broker's model left unexplained, its first assignment and the one
    it held when the scenario ended (``A-1 B-1``: each broker's queue -1; ``A0``: broker-a's
    queue 0)."""
    import pandas as pd

    def short(queues: Sequence[str]) -> str:
        return " ".join(q.split(":")[0].removeprefix("broker-").upper().replace("/", "")
                        for q in queues)

    rows = []
    for _, r in sorted(results.items()):
        for name, c in sorted(r["consumers"].items()):
            if c.get("rebalance") != "broker":
                continue
            logged = c["assignments"]
            rows.append({"line": r["line"], "group": c["group"], "member": name,
                         "mode": c["mode"], "logged": c["logged"],
                         "unexplained": c["unexplained"],
                         "first": short(logged[0][1]) if logged else "",
                         "at end": short(c["held_at_end"])})
    return pd.DataFrame(rows)


def go_sends_frame(sends: Sequence[Any], first: int = 10) -> pd.DataFrame:
    """The first ``first`` of the Go producer's sends (``goclient.producer.sends``): each one's
    attempts (``broker-a/0 -> broker-a/1``, without the ``broker-`` prefix) and where it was
    stored (``FAILED`` when every attempt was refused)."""
    import pandas as pd

    def short(q: Any) -> str:
        return f"{q.broker_name.removeprefix('broker-')}/{q.queue_id}"

    return pd.DataFrame([{"send": i + 1, "attempts": " -> ".join(short(q) for q in s.attempts),
                          "stored": short(s.stored) if s.stored else "FAILED"}
                         for i, s in enumerate(sends[:first])])


def failed_sends(recording: Path | str, producer: str) -> int:
    """How many sends of ``producer`` failed in a live recording (its rows, ``sends/``, read by
    ``trace.agreement.read_sends``)."""
    from rocketlb_core.trace.agreement import read_sends

    return sum("error" in row
               for row in read_sends(Path(recording) / "sends" / f"{producer}.jsonl.gz"))
