"""Tables from a simulation's journal, for the book's charts (pandas in, pandas out)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketlb_core.sim.world import RunResult

if TYPE_CHECKING:
    import pandas as pd


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
