"""Kafka's built-in producer partitioner, ported from ``kafka-clients``
(``producer.internals.BuiltInPartitioner`` and ``Utils.murmur2``) and checked against its
released classes (``tests/vectors/kafka/kafka-partitioner-*.jsonl.gz``).

- **Keyed records** go to ``toPositive(murmur2(key)) % partitions``: ``partition_for_key``.
- **Records without a key** stick to one partition (KIP-480) until ``batch.size`` bytes have
  been produced to it (or twice that, when the accumulator asks not to switch yet), then switch
  (KIP-794): with no load statistics, to a random partition among those with a leader (all of
  them when none has); with statistics, to a random partition weighted by how short its queue of
  unsent batches is. The accumulator reports queue sizes only for partitions that are not
  unavailable (``partitioner.availability.timeout.ms``): ``update_load_stats`` takes what it
  reports. The weight of a partition is ``max + 1 - its queue size``, ``max`` over the
  reported ones; all equal (and all reported) means no statistics.

Random draws are inputs (``random_partition``): Kafka draws ``toPositive(ThreadLocalRandom
.nextInt())``; the vectors record each draw, the replay takes them from a seeded generator.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_M32 = 0xFFFFFFFF


def _i32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def murmur2(data: bytes) -> int:
    """``Utils.murmur2``: Kafka's 32-bit MurmurHash2 (seed ``0x9747b28c``), as a Java int."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & _M32
    for i in range(length // 4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * m) & _M32
        k ^= k >> r
        k = (k * m) & _M32
        h = (h * m) & _M32
        h ^= k
    tail = length & ~3
    rest = length % 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & _M32
    h ^= h >> 13
    h = (h * m) & _M32
    h ^= h >> 15
    return _i32(h)


def to_positive(n: int) -> int:
    """``Utils.toPositive``: the low 31 bits."""
    return n & 0x7FFFFFFF


def partition_for_key(key: bytes, partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey``: where a keyed record goes."""
    return to_positive(murmur2(key)) % partitions


@dataclass
class StickyPartition:
    """``StickyPartitionInfo``: the partition records without a key go to, and the bytes
    produced to it since it was chosen."""

    partition: int
    produced_bytes: int = 0


class BuiltInPartitioner:
    """One topic's sticky, adaptive partitioner. ``available[p]``: partition ``p`` has a
    leader (``Cluster.availablePartitionsForTopic``); its length is the partition count. Each
    call reads the metadata it is given, so leaders and the partition count may change between
    calls (the ``partitioner-metadata`` vectors): the sticky partition stays until the next
    switch, which draws among the partitions of the metadata at hand."""

    def __init__(self, sticky_batch_size: int, random_partition: Callable[[], int]) -> None:
        if sticky_batch_size < 1:
            raise ValueError(f"stickyBatchSize must be >= 1 but got {sticky_batch_size}")
        self.sticky_batch_size = sticky_batch_size
        self.random_partition = random_partition
        self.cft: list[int] | None = None          # cumulative weights (PartitionLoadStats)
        self.ids: list[int] = []
        self.current: StickyPartition | None = None

    def next_partition(self, available: Sequence[bool]) -> int:
        r = self.random_partition()
        if self.cft is None:
            up = [p for p, ok in enumerate(available) if ok]
            return up[r % len(up)] if up else r % len(available)
        weighted = r % self.cft[-1]
        # Arrays.binarySearch over strictly increasing weights, then abs(result + 1): the
        # first entry above ``weighted``
        i = bisect_left(self.cft, weighted)
        if i < len(self.cft) and self.cft[i] == weighted:
            i += 1
        return self.ids[i]

    def peek(self, available: Sequence[bool]) -> StickyPartition:
        """``peekCurrentPartitionInfo``: the current sticky partition (chosen on first use)."""
        if self.current is None:
            self.current = StickyPartition(self.next_partition(available))
        return self.current

    def update_partition_info(self, info: StickyPartition, appended_bytes: int,
                              available: Sequence[bool], enable_switch: bool = True) -> None:
        """``updatePartitionInfo``: count the bytes appended; switch once ``batch.size`` is
        reached (twice that when ``enable_switch`` is off)."""
        info.produced_bytes = _i32(info.produced_bytes + appended_bytes)
        size = self.sticky_batch_size
        if (info.produced_bytes >= size and enable_switch) or info.produced_bytes >= _i32(2 * size):
            self.current = StickyPartition(self.next_partition(available))

    def update_load_stats(self, queue_sizes: Sequence[int] | None, partition_ids: Sequence[int],
                          length: int) -> None:
        """``updatePartitionLoadStats``: the first ``length`` entries are the reported
        partitions' queue sizes and ids."""
        if queue_sizes is None or length < 1 or len(queue_sizes) < 2:
            self.cft = None
            return
        sizes = list(queue_sizes[:length])
        top = max(sizes) + 1
        if len(set(sizes)) == 1 and length == len(queue_sizes):
            self.cft = None
            return
        cft, total = [], 0
        for q in sizes:
            total += top - q
            cft.append(total)
        self.cft = cft
        self.ids = list(partition_ids[:length])
