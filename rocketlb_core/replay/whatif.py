"""What-if comparisons for the book: one trace, several settings, small tables out.

>>> from rocketlb_core import data_path
>>> t = compare_producer_settings(data_path("traces", "seed002-outage"),
...     {"on": ReplayConfig(fault_tolerance=True), "off": ReplayConfig(fault_tolerance=False)})
>>> bool(t.loc["on", "failed"] < t.loc["off", "failed"])
True
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rocketlb_core.replay.engines import replay_rows
from rocketlb_core.replay.producer import Aggregates, ReplayConfig, summary_of
from rocketlb_core.trace import load_trace

if TYPE_CHECKING:
    import pandas as pd


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
