"""Producer load balancing: queue selection, latency fault tolerance, the send/retry loop.

Mirrors ``TopicPublishInfo``, ``ThreadLocalIndex``, ``MQFaultStrategy`` and
``LatencyFaultToleranceImpl`` of the RocketMQ client on four lines (``ProducerLine``), and the
retry loop of ``DefaultMQProducerImpl.sendDefaultImpl`` (spec section 2).
"""

from rocketlb_core.producer.fault import FaultItem, FaultTable4, FaultTable5
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.send import (
    Attempt,
    AttemptResult,
    BrokerModel,
    Outcome,
    SendConfig,
    SendMode,
    SendResult,
    send,
)
from rocketlb_core.producer.strategy import MQFaultStrategy
from rocketlb_core.producer.tables import compute_not_available_duration

__all__ = [
    "Attempt",
    "AttemptResult",
    "BrokerModel",
    "FaultItem",
    "FaultTable4",
    "FaultTable5",
    "MQFaultStrategy",
    "Outcome",
    "ProducerLine",
    "SendConfig",
    "SendMode",
    "SendResult",
    "ThreadLocalIndex",
    "TopicPublishInfo",
    "compute_not_available_duration",
    "send",
]
