"""What a producer replay is run with and what it writes: ``ReplayConfig`` and the output
columns (``rocketlb_core.replay.stepped`` and ``stretch`` fill them; ``aggregates`` sums them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.producer import ProducerLine, SendConfig

OUTPUT_COLUMNS = ("producer", "seq", "due_ms", "start_ms", "end_ms", "status", "broker",
                  "queue_id", "attempts", "error")
STATUSES = ("SEND_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE",
            "FAILED")
FAILED = STATUSES.index("FAILED")
STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}


@dataclass(frozen=True)
class ReplayConfig:
    """What to replay with. ``fault_tolerance=None`` keeps what each producer recorded."""

    line: ProducerLine = ProducerLine.V4_9_8
    """The line to replay under (text such as ``"5.3.3"`` is parsed once, here)."""
    fault_tolerance: bool | None = None
    seed: int = 0
    send_config: SendConfig = field(default_factory=SendConfig)
    index_start: int | None = None
    """Pin the round-robin counter's start for every route version (upstream: random)."""
    partitioner: str | None = None
    """``"kafka"``: send through Kafka's partitioner instead of RocketMQ's selection
    (``rocketlb_core.kafka.producer``; ``line`` and ``fault_tolerance`` then play no part)."""
    client: str | None = None
    """``"grpc"``: send through the gRPC producer of rocketmq-client-java 5.0.8 (its publishing
    load balancer and send loop: ``rocketlb_core.replay.grpc_producer``) instead of the remoting
    client of ``line`` (``line`` and ``fault_tolerance`` then play no part)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", ProducerLine.parse(self.line))
        if self.partitioner not in (None, "kafka"):
            raise ValueError(f"unknown partitioner {self.partitioner!r} (only 'kafka')")
        if self.client not in (None, "grpc"):
            raise ValueError(f"unknown client {self.client!r} (only 'grpc')")
        if self.client is not None and self.partitioner is not None:
            raise ValueError("a client and a partitioner exclude each other")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line.value, "fault_tolerance": self.fault_tolerance,
                               "seed": self.seed}
        if self.index_start is not None:
            out["index_start"] = self.index_start
        if self.partitioner is not None:
            out["partitioner"] = self.partitioner
        if self.client is not None:
            out["client"] = self.client
        return out
