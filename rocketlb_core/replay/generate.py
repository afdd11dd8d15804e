"""``python -m rocketlb_core.replay.generate --sends N --out DIR``: a large synthetic trace for
scale tests and benchmarks (10 M or 100 M sends), written in the replay layout
(``rocketlb_core.replay.layout``) in streamed row groups, so memory does not grow with N.

Producer traffic only (no membership). Four brokers with 8 queues each; ``--producers``
producers share ``--rate`` messages a second (default 10,000: a 10 M trace spans 1,000 s),
each with Poisson arrivals from its own seeded stream; ``--files`` part files of whole
producers (Spark runs one task per file). Broker-b is silent-down for 10 % of the span in the
middle and broker-c slow (median 700 ms) for another 20 %: enough faults that fault tolerance on
and off differ.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.cli import parser, run
from rocketlb_core.errors import UsageError
from rocketlb_core.limits import MAX_TIME_MS
from rocketlb_core.replay.layout import FORCE_HELP
from rocketlb_core.trace import CONDITIONS, FORMAT, SENDS, VERSION

BROKERS = ("broker-a", "broker-b", "broker-c", "broker-d")
TOPIC = "TopicLarge"
CHUNK = 1_000_000
COMMAND = "replay generate"


def generate(out: Path, sends: int, producers: int = 64, rate: float = 10_000.0,
             files: int = 8, seed: int = 0, *, force: bool = False) -> None:
    """Write the trace folder ``out`` (atomically: all of it or nothing; ``out`` follows
    ``rocketlb_core.atomic``'s rule, ``force`` as there)."""
    for name, value, low in (("sends", sends, 1), ("producers", producers, 1),
                             ("files", files, 1), ("seed", seed, 0)):
        if not low <= value < 1 << 63:
            raise UsageError(f"--{name} must be an integer from {low} to 2^63-1, got {value}")
    if not (math.isfinite(rate) and 0 < rate <= 1e9):
        raise UsageError(f"--rate must be a number > 0 and <= 1e9, got {rate}")
    if sends / rate * 1000 > MAX_TIME_MS:
        raise UsageError(f"--sends {sends} at --rate {rate} span more than the "
                         f"{MAX_TIME_MS} ms a trace may span (data/README.md)")
    with atomic_folder(out, COMMAND, force=force) as tmp:
        _generate(tmp, sends, producers, rate, files, seed)


def _generate(out: Path, sends: int, producers: int, rate: float, files: int,
              seed: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    span = int(sends / rate * 1000)
    folder = out / "sends.parquet"
    folder.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([(c, {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string()}[t])
                        for c, t in SENDS.items()])
    files = max(1, min(files, producers))
    for f in range(files):
        with pq.ParquetWriter(folder / f"part-{f:05d}.parquet", schema,
                              compression="zstd") as writer:
            for p in range(f * producers // files, (f + 1) * producers // files):
                n = sends // producers + (1 if p < sends % producers else 0)
                name = f"producer-{p:04d}"
                rng = np.random.default_rng([seed, p])
                gaps = rng.exponential(span / max(n, 1), n)
                times = np.minimum(np.cumsum(gaps), span - 1).astype(np.int64)
                for lo in range(0, n, CHUNK):
                    hi = min(n, lo + CHUNK)
                    writer.write_table(pa.table({
                        "time_ms": pa.array(times[lo:hi]),
                        "producer": pa.array([name] * (hi - lo), pa.string()),
                        "topic": pa.array([TOPIC] * (hi - lo), pa.string()),
                        "key": pa.nulls(hi - lo, pa.string()),
                        "size": pa.array(np.full(hi - lo, 1024, np.int32))}, schema=schema))
    t1, t2, t3 = int(span * 0.4), int(span * 0.5), int(span * 0.7)
    rows = [(0, b, None, "latency", None, 2.0, 10.0) for b in BROKERS] + [
        (t1, "broker-b", None, "down", "silent", None, None), (t2, "broker-b", None, "up",
                                                               None, None, None),
        (t2, "broker-c", None, "latency", None, 700.0, 2000.0),
        (t3, "broker-c", None, "latency", None, 2.0, 10.0)]
    rows.sort(key=lambda r: r[0])
    cols = list(CONDITIONS)
    types = {"int64": pa.int64(), "string": pa.string(), "double": pa.float64()}
    pq.write_table(pa.table({c: pa.array([r[i] for r in rows], types[CONDITIONS[c]])
                             for i, c in enumerate(cols)}), out / "conditions.parquet")
    (out / "brokers.csv").write_text("cluster,broker_name,broker_id,address,room\n" + "".join(
        f"DefaultCluster,{b},0,10.0.{i}.11:10911,room-1\n" for i, b in enumerate(BROKERS)))
    (out / "route.csv").write_text("topic,broker_name,read_queue_nums,write_queue_nums,perm\n" +
                                   "".join(f"{TOPIC},{b},8,8,6\n" for b in BROKERS))
    (out / "trace.json").write_text(json.dumps({
        "format": FORMAT, "version": VERSION, "name": f"generated-{sends}", "topic": TOPIC,
        "start_ms": 0, "end_ms": span, "line": "4.9.8",
        "provenance": f"rocketlb_core.replay.generate --sends {sends} --producers {producers} "
                      f"--rate {rate} --files {files} --seed {seed}",
        "fault_tolerance": {}}, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = parser("python -m rocketlb_core.replay.generate", __doc__.split("\n\n")[0],
                "python -m rocketlb_core.replay.generate --sends 10000000 --out /tmp/t10m")
    ap.add_argument("--sends", type=int, required=True)
    ap.add_argument("--producers", type=int, default=64)
    ap.add_argument("--rate", type=float, default=10_000.0, help="messages per second in all")
    ap.add_argument("--files", type=int, default=8, help="part files (Spark tasks)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--force", action="store_true", help=FORCE_HELP)

    def body() -> int:
        a = ap.parse_args(argv)
        generate(a.out, a.sends, a.producers, a.rate, a.files, a.seed, force=a.force)
        return 0

    return run(body)


if __name__ == "__main__":
    raise SystemExit(main())
