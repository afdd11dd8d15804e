"""rocketlb_core: Apache RocketMQ's load balancing, faithful to upstream, in plain Python.

Layers run one way (house style 1): ``javamath`` and ``model`` (the data model), then the
algorithms, then the Spark layer (``rocketlb_core.spark``) and the viz layer
(``rocketlb_core.viz``). The core imports the standard library only; Spark, pandas, Altair and
widgets load lazily, so this import stays fast and starts no JVM.

The spec every docstring cites is ``reference/rocketmq-load-balancing.md`` in the shared folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketlb_core.model import (
    PERM_READ,
    PERM_WRITE,
    BrokerData,
    MessageQueue,
    QueueData,
    TopicRoute,
    publish_queues,
    subscribe_queues,
)
from rocketlb_core.paths import data_path

if TYPE_CHECKING:
    from rocketlb_core.spark.session import spark_session

__version__ = "0.1.0"

__all__ = [
    "PERM_READ",
    "PERM_WRITE",
    "BrokerData",
    "MessageQueue",
    "QueueData",
    "TopicRoute",
    "data_path",
    "publish_queues",
    "spark_session",
    "subscribe_queues",
]


def __getattr__(name: str) -> Any:
    if name == "spark_session":
        from rocketlb_core.spark.session import spark_session

        return spark_session
    raise AttributeError(f"module 'rocketlb_core' has no attribute {name!r}")
