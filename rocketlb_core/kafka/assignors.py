"""Kafka's client-side consumer assignors, ported from ``kafka-clients`` and checked against its
released classes (``tests/vectors/kafka-*.jsonl.gz``, made by ``rocketlb_core.kafka.vectors``).

A Kafka partition is what RocketMQ calls a queue, a group member what RocketMQ calls a client id
(``../shared/reference/peers.md``). The leader of a consumer group runs the assignor on what the
JoinGroup response gave it: every member's subscription, put into a ``java.util.HashMap`` in the
order the response lists them. Kafka's assignors iterate such maps, so the order of each
member's partitions follows Java's hash order (``javamath.java_hash_order``); the ports keep it.

- ``range_assign``: ``RangeAssignor`` (``partition.assignment.strategy=range``): per topic, the
  members subscribed to it sorted (static members by ``group.instance.id`` first, then by member
  id), each given a contiguous range, the first ``partitions % members`` one partition more.
  With racks (KIP-881: each member's ``client.rack``, each partition's replicas' racks) and a
  topic whose partitions are not on every rack, partitions first go to members of their racks
  within those ranges' sizes (``range_assign``'s ``racks``).
- ``round_robin_assign``: ``RoundRobinAssignor``: every partition of every subscribed topic,
  topics in ``String`` order, dealt to the sorted members in turn, skipping a member not
  subscribed to the partition's topic.

Also here: ``sticky_assign`` and ``cooperative_sticky_assign`` (the constrained builder for
equal subscriptions; ``kafka.sticky_general`` is the general one), and KIP-848's server-side
``uniform_assign`` (``kafka.uniform_heterogeneous`` for unequal subscriptions; ``jvm``,
``KAFKA_JVM``) and ``server_range_assign``. The server-side assignors read no racks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from itertools import chain, repeat
from operator import itemgetter

from rocketlb_core.javamath import (
    java_hash_order,
    java_integer_compare,
    java_set_order,
    java_string_compare,
    java_string_key,
    java_uuid_compare,
    java_uuid_hash,
)
from rocketlb_core.kafka.sticky_general import GeneralAssignorError, general_assign
from rocketlb_core.kafka.uniform_heterogeneous import (
    HeterogeneousAssignorError,
    uniform_heterogeneous_assign,
)

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Member:
    """A group member as the leader sees it: its member id, its ``group.instance.id`` (static
    membership), the topics it subscribes to, in its subscription's order, and its
    ``client.rack`` (``rack``, keyword only; ``None`` or ``""``: none)."""

    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None = None
    rack: str | None = field(default=None, kw_only=True)


Racks = Mapping[str, Sequence[Collection[str | None]]]
"""Each topic's partitions' replicas' racks, as the ``Cluster`` metadata gives them: topic ->
one collection a partition (``None``: a broker without a rack). A topic missing: no racks."""


def _partition_racks(racks: Racks | None, topic: str, count: int) -> list[frozenset[str]]:
    """The distinct racks of each partition's replicas (``Node.rack``, nulls dropped)."""
    given = (racks or {}).get(topic, ())
    return [frozenset(r for r in (given[p] if p < len(given) else ()) if r is not None)
            for p in range(count)]


def _use_rack_aware(consumer_racks: Collection[str], partition_racks: Collection[str],
                    per_partition: Collection[frozenset[str]]) -> bool:
    """``AbstractPartitionAssignor.useRackAwareAssignment``: consumers and replicas share a rack,
    and some partition is not on every rack that holds replicas."""
    if not consumer_racks or not set(consumer_racks) & set(partition_racks):
        return False
    every = frozenset(partition_racks)
    return not all(r == every for r in per_partition)


def _member_order(a: Member, b: Member) -> int:
    """``AbstractPartitionAssignor.MemberInfo.compareTo``."""
    if a.instance_id is not None and b.instance_id is not None:
        return java_string_compare(a.instance_id, b.instance_id)
    if a.instance_id is not None:
        return -1
    if b.instance_id is not None:
        return 1
    return java_string_compare(a.member_id, b.member_id)


def sorted_members(members: Sequence[Member]) -> list[Member]:
    return sorted(members, key=cmp_to_key(_member_order))


def _group(members: Sequence[Member]) -> dict[str, Member]:
    """The subscriptions map as the leader iterates it: a ``HashMap`` filled in ``members``
    order (a repeated member id keeps its last subscription, in its first position)."""
    last = {m.member_id: m for m in members}
    return {mid: last[mid] for mid in java_hash_order([m.member_id for m in members])}


def _partitions_per_topic(group: Mapping[str, Member], partitions: Mapping[str, int]
                          ) -> list[tuple[str, int]]:
    """``AbstractPartitionAssignor.assign(Cluster, ...)``: the subscribed topics that have
    partitions, as its ``HashMap`` (filled from a ``HashSet`` of the subscribed topics) iterates."""
    subscribed = java_hash_order([t for m in group.values() for t in m.topics])
    have = [t for t in subscribed if partitions.get(t, 0) > 0]
    return [(t, partitions[t]) for t in java_hash_order(have)]


def range_assign(partitions: Mapping[str, int], members: Sequence[Member], *,
                 before_kip881: bool = False, racks: Racks | None = None
                 ) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assign``: each member id's partitions, in Kafka's order.

    ``before_kip881``: as released up to 3.4, which walked the topics in the order of its map
    of topic to members, filled by ``computeIfAbsent`` (a new key first in its bin), rather than
    of topic to partitions, filled by ``put``. The shares are the same; the order of a member's
    partitions differs when two topics share a bin (329 of the 3,500 vectors).

    ``racks``: the partitions' replicas' racks (``Racks``); with members' racks it may make the
    assignment rack-aware (KIP-881, ``_range_with_racks``).
    """
    group = _group(members)
    if racks is not None and not before_kip881:
        return _range_with_racks(partitions, group, racks)
    per_topic: dict[str, list[Member]] = {}
    for m in group.values():
        for t in m.topics:
            per_topic.setdefault(t, []).append(m)
    assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group}
    if before_kip881:
        # one computeIfAbsent a (member, topic): one on a present key still grows the table
        topics = [(t, partitions[t])
                  for t in java_hash_order([t for m in group.values() for t in m.topics],
                                           compute_if_absent=True)
                  if partitions.get(t, 0) > 0]
    else:
        topics = _partitions_per_topic(group, partitions)
    for topic, count in topics:
        consumers = list(dict.fromkeys(m.member_id for m in
                                       sorted_members(per_topic.get(topic, []))))
        if not consumers:
            continue
        per, extra = divmod(count, len(consumers))
        unassigned = list(range(count))
        for c in consumers:
            if not unassigned:
                break
            take = per + (1 if extra > 0 else 0)
            if take <= 0:
                continue
            mine, unassigned = unassigned[:take], unassigned[take:]
            assignment[c].extend((topic, p) for p in mine)
            if len(mine) > per:
                extra -= 1
    return assignment


class _TopicState:
    """``RangeAssignor.TopicAssignmentState``: one topic's members (sorted), its partitions not
    yet assigned, and the ranges' sizes as they are used up."""

    def __init__(self, topic: str, count: int, members: list[Member],
                 consumer_racks: Mapping[str, str], racks: Racks) -> None:
        self.topic = topic
        self.consumers = {m.member_id: consumer_racks.get(m.member_id)
                          for m in sorted_members(members)}
        self.unassigned = list(range(count))
        self.assigned = dict.fromkeys(self.consumers, 0)
        n = len(self.consumers)
        self.per, self.extra = divmod(count, n) if n else (0, 0)
        mine = {consumer_racks[c] for c in self.consumers if c in consumer_racks}
        self.partition_racks = _partition_racks(racks, topic, count) if mine else []
        every = frozenset().union(*self.partition_racks)
        self.needs_racks = _use_rack_aware(mine, every, self.partition_racks)

    def racks_match(self, consumer: str, p: int) -> bool:
        rack = self.consumers[consumer]
        return rack is None or (p < len(self.partition_racks) and rack in self.partition_racks[p])

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.per + (1 if self.extra > 0 else 0) - self.assigned[consumer])

    def assign(self, consumer: str, ps: list[int], out: dict[str, list[TopicPartition]]) -> None:
        out[consumer].extend((self.topic, p) for p in ps)
        self.assigned[consumer] += len(ps)
        if self.assigned[consumer] > self.per:
            self.extra -= 1
        taken = set(ps)
        self.unassigned = [p for p in self.unassigned if p not in taken]

    def assign_ranges(self, out: dict[str, list[TopicPartition]], by_rack: bool) -> None:
        for c in self.consumers:
            if not self.unassigned:
                break
            ps = [p for p in self.unassigned if not by_rack or self.racks_match(c, p)]
            ps = ps[:self.max_assignable(c)]
            if ps:
                self.assign(c, ps, out)


def _range_with_racks(partitions: Mapping[str, int], group: Mapping[str, Member], racks: Racks
                      ) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assignPartitions`` (KIP-881). When some topic needs it (its members and
    replicas share racks, and not every partition is on every rack), partitions go first to
    members of their racks: per group of topics with the same members and partition count
    (co-partitioned), partition ``p`` of all of them to the first member that matches on every
    one and has room in each; a lone topic by ranges over its rack-matching partitions. Then
    the ordinary ranges place the rest, and every member's list is sorted by topic and
    partition. Without such a topic the result is the plain one."""
    consumer_racks = {mid: m.rack for mid, m in group.items() if m.rack}
    per_topic: dict[str, list[Member]] = {}
    for m in group.values():
        for t in m.topics:
            if m not in per_topic.setdefault(t, []):
                per_topic[t].append(m)
    states = [_TopicState(t, n, per_topic.get(t, []), consumer_racks, racks)
              for t, n in _partitions_per_topic(group, partitions)]
    out: dict[str, list[TopicPartition]] = {mid: [] for mid in group}
    use = any(s.needs_racks for s in states)
    if use:
        # groupingBy(consumers), then groupingBy(partition count): each topic's shares are its
        # own and the lists are sorted at the end, so the groups' order plays no part
        groups: dict[tuple[frozenset[tuple[str, str | None]], int], list[_TopicState]] = {}
        for s in states:
            key = (frozenset(s.consumers.items()), len(s.partition_racks))
            groups.setdefault(key, []).append(s)
        for (_, count), same in groups.items():
            if len(same) > 1:
                _co_partitioned(list(same[0].consumers), count, same, out)
            elif same[0].needs_racks:
                same[0].assign_ranges(out, by_rack=True)
    for s in states:
        s.assign_ranges(out, by_rack=False)
    if use:
        keys = {t: java_string_key(t) for t in partitions}
        for mine in out.values():
            mine.sort(key=lambda tp: (keys[tp[0]], tp[1]))
    return out


def _co_partitioned(consumers: list[str], count: int, states: list[_TopicState],
                    out: dict[str, list[TopicPartition]]) -> None:
    """``RangeAssignor.assignCoPartitionedWithRackMatching``."""
    remaining = list(consumers)
    for p in range(count):
        match = next((c for c in remaining
                      if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)),
                     None)
        if match is None:
            continue
        for s in states:
            s.assign(match, [p], out)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def round_robin_assign(partitions: Mapping[str, int], members: Sequence[Member]
                       ) -> dict[str, list[TopicPartition]]:
    """``RoundRobinAssignor.assign``: each member id's partitions, in Kafka's order."""
    group = _group(members)
    assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group}
    ring = sorted_members(list(group.values()))
    subscribed = {mid: set(m.topics) for mid, m in group.items()}
    counts = dict(_partitions_per_topic(group, partitions))
    topics = sorted({t for m in group.values() for t in m.topics}, key=java_string_key)
    at = 0
    for topic in topics:
        for p in range(counts.get(topic, 0)):
            while topic not in subscribed[ring[at].member_id]:
                at = (at + 1) % len(ring)
            assignment[ring[at].member_id].append((topic, p))
            at = (at + 1) % len(ring)
    return assignment


def range_assign_3_4(partitions: Mapping[str, int], members: Sequence[Member], *,
                     racks: Racks | None = None) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor`` of kafka-clients 3.4 and earlier (``range_assign``), which reads no
    racks: ``racks`` (the cluster's, as a vector records them) is accepted and ignored."""
    return range_assign(partitions, members, before_kip881=True, racks=racks)


ASSIGNORS = {"range": range_assign, "range@3.4": range_assign_3_4,
             "roundrobin": round_robin_assign}
"""Kafka's client-side assignors by their ``partition.assignment.strategy`` names (``@3.4``:
as kafka-clients 3.4 and earlier release it, where it differs)."""


def for_release(assignor: str, version: str) -> str:
    """The ``ASSIGNORS`` key of ``assignor`` as kafka-clients ``version`` runs it
    (``uniform``: the group coordinator's)."""
    major, minor = (int(x) for x in version.split(".")[:2])
    if assignor == "range" and (major, minor) < (3, 5):
        return "range@3.4"
    if assignor == "uniform":
        return "uniform@4.0" if (major, minor) < (4, 1) else "uniform"
    if assignor == "server-range":
        return "server-range"
    if assignor not in ASSIGNORS:
        raise ValueError(f"unknown Kafka assignor {assignor!r}")
    return assignor


# ------------------------------------------------------------------ the sticky assignors

class KafkaAssignorError(RuntimeError):
    """Where Kafka's assignor throws (``kind``: the Java exception's simple name)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class StickyMember(Member):
    """A member as the sticky assignors see it: what it owned before and in which generation
    (``None``: it brings no history). The eager ``StickyAssignor`` reads both from the user data
    its own instance encoded; ``CooperativeStickyAssignor`` from the subscription's owned
    partitions and generation. ``generation_in_subscription``: the member's subscription also
    carries its generation id, as the ``ConsumerCoordinator`` builds it, which is where both
    assignors read the generation of a partition's earlier claimant (for the eager one, without
    it, that claimant has none)."""

    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    generation_in_subscription: bool = False


DEFAULT_GENERATION = -1


@dataclass(frozen=True)
class _RackInfo:
    """``AbstractStickyAssignor.RackInfo``: each member's rack and each partition's replicas'
    racks when the assignment is rack-aware (both empty otherwise), and for every partition
    the number of members in its replicas' racks whenever some member has a rack (Kafka counts
    these even when it does not use racks)."""

    consumer_racks: Mapping[str, str]
    partition_racks: Mapping[TopicPartition, frozenset[str]]
    consumers_near: Mapping[TopicPartition, int]

    @classmethod
    def of(cls, group: Mapping[str, Member], have: Mapping[str, int], racks: Racks | None
           ) -> _RackInfo:
        by_rack: dict[str, int] = {}
        member_rack: dict[str, str] = {}
        for mid, m in group.items():
            if m.rack:
                by_rack[m.rack] = by_rack.get(m.rack, 0) + 1
                member_rack[mid] = m.rack
        if not by_rack:
            return cls({}, {}, {})
        per: dict[TopicPartition, frozenset[str]] = {}
        for t, n in have.items():
            for p, r in enumerate(_partition_racks(racks, t, n)):
                per[(t, p)] = r
        every = frozenset().union(*per.values())
        near = {tp: sum(by_rack.get(r, 0) for r in rs) for tp, rs in per.items()}
        if _use_rack_aware(list(by_rack), every, list(per.values())):
            return cls(member_rack, per, near)
        return cls({}, {}, near)

    def mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        """``racksMismatch``."""
        mine = self.consumer_racks.get(consumer)
        if mine is None:
            return False
        theirs = self.partition_racks.get(tp)
        return theirs is None or mine not in theirs

    def next_consumer(self, tp: TopicPartition, consumers: list[str], first: int) -> int:
        """``nextRackConsumer``: the index of the first member from ``first`` on (round the
        list) in one of the partition's racks, or -1."""
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first + i) % n
            r = self.consumer_racks.get(consumers[index])
            if r is not None and r in racks:
                return index
        return -1


def _owned_by_member(group: Mapping[str, StickyMember], all_topics: set[str], eager: bool,
                     claimed: Mapping[str, tuple[TopicPartition, ...]] | None = None,
                     fast: bool = True, apart: bool | None = None
                     ) -> tuple[bool, dict[str, list[TopicPartition]], set[TopicPartition]]:
    """``AbstractStickyAssignor.allSubscriptionsEqual``: whether every member subscribes to the
    same topics, each member's valid previous partitions (in the order of Kafka's
    ``consumerToOwnedPartitions``, a ``HashMap`` filled in the group's order), and the partitions
    two members of the same generation both claimed (given to neither). A partition claimed
    twice goes to the higher generation; the other claimant's generation is read from its
    subscription, which for the eager assignor carries none unless the member's subscription
    was built with it (``StickyMember.generation_in_subscription``; its generation otherwise
    lives in the user data only), so there a claimant with any history outranks the earlier
    one. ``fast``: take whole members at once where no claim meets another (the same answer,
    tested against ``fast=False``, which walks every claim as Kafka does); ``apart``: the
    caller knows no claim meets another and every one is of a topic in ``all_topics``."""
    equal = True
    subscribed: set[str] = set()
    previous_owner: dict[TopicPartition, str] = {}
    owned_by: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    claims_of = {c: claimed[c] if claimed is not None else _claimed(m, eager)
                 for c, m in group.items()}
    if apart is None:
        flat = list(chain.from_iterable(claims_of.values()))
        # no partition claimed twice, and every one of a topic that exists: each keeps its claims
        names = set(map(itemgetter(0), flat))
        apart = fast and names <= all_topics and len(
            set(map(itemgetter(1), flat)) if len(names) == 1 else set(flat)) == len(flat)
    for consumer, m in group.items():
        if not subscribed:
            subscribed.update(m.topics)
        elif equal and not (len(m.topics) == len(subscribed) and subscribed >= set(m.topics)):
            equal = False
        claims = claims_of[consumer]
        if apart:
            owned_by[consumer] = list(claims)
            continue
        generation = DEFAULT_GENERATION if m.generation is None else m.generation
        mine: list[TopicPartition] = []
        owned_by[consumer] = mine
        if fast and set(map(itemgetter(0), claims)) <= all_topics and \
                not previous_owner.keys() & claims:
            # the loop below, when no claim meets an earlier one: unless a claim is repeated
            size = len(previous_owner)
            previous_owner.update(zip(claims, repeat(consumer)))
            if len(previous_owner) - size == len(claims):
                mine.extend(claims)
                continue
            for tp in claims:                           # repeated: undo, and walk it
                previous_owner.pop(tp, None)
        for tp in claims:
            if tp[0] not in all_topics:
                continue
            other = previous_owner.get(tp)
            if other is None:
                mine.append(tp)
                previous_owner[tp] = consumer
                continue
            om = group[other]
            other_generation = DEFAULT_GENERATION if om.generation is None or (
                eager and not om.generation_in_subscription) else om.generation
            if generation == other_generation:
                multiple.add(tp)
                _remove_first(owned_by[other], tp)
                previous_owner[tp] = consumer
            elif generation > other_generation:
                mine.append(tp)
                _remove_first(owned_by[other], tp)
                previous_owner[tp] = consumer
    # consumerToOwnedPartitions is a HashMap of its own, filled in the group's order: the same
    # order, except where a bin of the group's map is a tree (issue 33)
    return equal, {c: owned_by[c] for c in java_hash_order(list(owned_by))}, multiple


def _claimed(m: StickyMember, eager: bool) -> tuple[TopicPartition, ...]:
    """What a member claims as its member data gives it. The eager ``StickyAssignor`` reads its
    user data, present once the member was assigned (a generation), where the member's own
    instance wrote its partitions grouped by topic through a ``HashMap`` filled by
    ``computeIfAbsent`` (``CollectionUtils.groupPartitionsByTopic``): topics in that map's order,
    each topic's partitions in the assignment's order. The cooperative one reads the
    subscription's owned partitions as they are."""
    if not eager:
        return m.owned
    if m.generation is None:
        return ()
    if len(set(map(itemgetter(0), m.owned))) <= 1:
        return m.owned                                  # one topic: grouping keeps the order
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in m.owned:
        by_topic.setdefault(tp[0], []).append(tp)
    # one computeIfAbsent a partition: one on a present key still grows the table
    return tuple(tp for t in java_hash_order([tp[0] for tp in m.owned], compute_if_absent=True)
                 for tp in by_topic[t])


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    """``List.remove(Object)``."""
    if tp in items:
        items.remove(tp)


def _constrained(partitions: Mapping[str, int], owned_by: dict[str, list[TopicPartition]],
                 multiple: set[TopicPartition], rack: _RackInfo | None = None,
                 claimed: tuple[str, set[int]] | None = None
                 ) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
    """``ConstrainedAssignmentBuilder.build`` (every member subscribes to the same topics): each
    member keeps what it owned up to its quota, the rest is dealt round robin to the members
    below quota in member-id order. Also returns the partitions that change owner
    (``partitionsTransferringOwnership``). With racks (``rack``), a member keeps only owned
    partitions of its rack, and the free partitions, those with the fewest members in their
    replicas' racks first, go first round robin to members of their racks
    (``assignRackAwareRoundRobin``). ``claimed``: ``_one_topic_claims`` of the members'
    claims, when it holds: then the unassigned partitions are those nobody claimed and those a
    member gave up, the walk's answer without a pass over what was kept."""
    rack = rack or _RackInfo({}, {}, {})
    total = sum(partitions.values())
    n = len(owned_by)
    min_quota, max_quota = total // n, -(-total // n)
    expected_over = total % n
    current_over = 0
    assignment: dict[str, list[TopicPartition]] = {c: [] for c in owned_by}
    assigned: list[TopicPartition] = []
    under: list[str] = []
    exact: list[str] = []
    maybe_revoked: dict[TopicPartition, str] = {}
    transferring: dict[TopicPartition, str] = {}
    walk = claimed is None or bool(multiple)            # the unassigned from what is kept
    # owned_by holds partitions of these topics only (_owned_by_member leaves out the rest)
    topic_key = {t: java_string_key(t) for t in partitions}
    for consumer, raw in owned_by.items():
        if rack.consumer_racks.get(consumer) is not None:
            matching = []
            for tp in raw:
                if rack.mismatch(consumer, tp):
                    maybe_revoked[tp] = consumer
                else:
                    matching.append(tp)
        else:
            matching = raw                              # a member without a rack: no mismatch
        owned = _by_partition_then_topic(matching, topic_key)
        for tp in multiple:
            _remove_first(owned, tp)
        if len(owned) < min_quota:
            assignment[consumer].extend(owned)
            if walk:
                assigned.extend(owned)
            under.append(consumer)
        elif len(owned) >= max_quota and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exact.clear()
            assignment[consumer].extend(owned[:max_quota])
            if walk:
                assigned.extend(owned[:max_quota])
            for tp in owned[max_quota:]:
                maybe_revoked[tp] = consumer
        else:
            assignment[consumer].extend(owned[:min_quota])
            if walk:
                assigned.extend(owned[:min_quota])
            for tp in owned[min_quota:]:
                maybe_revoked[tp] = consumer
            if current_over < expected_over:
                exact.append(consumer)
    if not walk:
        assert claimed is not None
        topic, numbers = claimed
        free = set(range(partitions[topic])) - numbers
        free.update(tp[1] for tp in maybe_revoked)      # claims of ``topic`` not kept
        unassigned = [tp for t in sorted(partitions, key=java_string_key) for tp in (
            zip(repeat(t), sorted(free)) if t == topic else zip(repeat(t), range(partitions[t])))]
    else:
        unassigned = _unassigned(partitions, assigned)
    under.sort(key=java_string_key)
    exact.sort(key=java_string_key)

    def give(tp: TopicPartition, consumer: str) -> int:
        mine = assignment[consumer]
        mine.append(tp)
        if (tp in maybe_revoked and maybe_revoked[tp] != consumer) or tp in multiple:
            transferring[tp] = consumer
        return len(mine)

    if rack.consumers_near:                             # sortPartitionsByRackConsumers
        unassigned = sorted(unassigned, key=lambda tp: rack.consumers_near.get(tp, 0))
    if rack.consumer_racks:                             # assignRackAwareRoundRobin
        left: list[TopicPartition] = []
        at = 0
        for tp in unassigned:
            chosen: str | None = None
            i = rack.next_consumer(tp, under, at)
            if i >= 0:
                chosen = under[i]
                count = len(assignment[chosen]) + 1
                if count >= min_quota:
                    under.remove(chosen)
                    if count < max_quota and current_over < expected_over:
                        exact.append(chosen)
                else:
                    i += 1
                at = i % len(under) if under else 0
            elif exact:
                j = rack.next_consumer(tp, exact, 0)
                if j >= 0:
                    chosen = exact[j]
                    if len(assignment[chosen]) + 1 == max_quota:
                        del exact[j]
                        current_over += 1
                        if current_over == expected_over:
                            exact.clear()
            if chosen is None:
                left.append(tp)
            else:
                give(tp, chosen)
        unassigned = left

    # assignRoundRobin, with java.util.LinkedList's iterator over ``under``
    pos, last = 0, -1
    for tp in unassigned:
        if pos < len(under):
            consumer, last = under[pos], pos
            pos += 1
        elif not under and not exact:
            raise KafkaAssignorError("IllegalStateException",
                                     "No more unfilled consumers to be assigned.")
        elif not under:
            consumer = exact.pop(0)
        else:
            pos, last = 1, 0
            consumer = under[0]
        count = give(tp, consumer)
        if count == min_quota:
            if last < 0:
                raise KafkaAssignorError("IllegalStateException", "iterator remove")
            del under[last]
            pos, last = last, -1
            exact.append(consumer)
        elif count == max_quota:
            current_over += 1
    if under:                                           # verifyUnfilledMembers
        if current_over != expected_over:
            raise KafkaAssignorError(
                "IllegalStateException", "We haven't reached the expected number of members "
                "with more than the minQuota partitions, but no more partitions to be assigned")
        for member in under:
            if len(assignment[member]) != min_quota:
                raise KafkaAssignorError(
                    "IllegalStateException", f"Consumer: [{member}] doesn't reach minQuota "
                    "partitions, and no more partitions to be assigned")
    return assignment, transferring


def _by_partition_then_topic(tps: list[TopicPartition], topic_key: Mapping[str, object]
                             ) -> list[TopicPartition]:
    """Sorted by partition, then topic in ``String`` order (the constrained builder's
    comparator); a sort by partition alone when there is one topic (keys compared in C)."""
    if len(topic_key) == 1 or len(set(map(itemgetter(0), tps))) <= 1:
        return sorted(tps, key=itemgetter(1))
    return sorted(tps, key=lambda tp: (tp[1], topic_key[tp[0]]))


def _one_topic_claims(partitions: Mapping[str, int], claimed: Mapping[str, Sequence[TopicPartition]]
                      ) -> tuple[str, set[int]] | None:
    """The one topic every claim is of and the claimed partition numbers, when that topic
    exists, every number is one of its partitions and none is claimed twice (then no claim meets
    another); else None."""
    flat = list(chain.from_iterable(claimed.values()))
    names = set(map(itemgetter(0), flat))
    if len(names) != 1:
        return None
    (topic,) = names
    numbers = set(map(itemgetter(1), flat))
    if topic not in partitions or len(numbers) != len(flat) or min(numbers) < 0 or \
            max(numbers) >= partitions[topic]:
        return None
    return topic, numbers


def _unassigned(partitions: Mapping[str, int], assigned: list[TopicPartition]
                ) -> list[TopicPartition]:
    """``getUnassignedPartitions``: every partition, topics in ``String`` order, minus the
    assigned ones (walked in step with them, sorted, as Kafka does)."""
    topics = sorted(partitions, key=java_string_key)
    if not assigned:
        return [(t, i) for t in topics for i in range(partitions[t])]
    fast = _unassigned_by_set(partitions, topics, assigned)
    return fast if fast is not None else _unassigned_walk(partitions, topics, assigned)


def _unassigned_walk(partitions: Mapping[str, int], topics: list[str],
                     assigned: list[TopicPartition]) -> list[TopicPartition]:
    """``getUnassignedPartitions`` as Kafka walks it: both lists sorted, in step."""
    if not assigned:
        return [(t, i) for t in topics for i in range(partitions[t])]
    keys = {t: java_string_key(t) for t in {tp[0] for tp in assigned}}
    ordered = sorted(assigned, key=lambda tp: (keys[tp[0]], tp[1]))
    out: list[TopicPartition] = []
    k, direct = 0, False
    for t in topics:
        for i in range(partitions[t]):
            if direct or ordered[k] != (t, i):
                out.append((t, i))
            elif k + 1 < len(ordered):
                k += 1
            else:
                direct = True
    return out


def _unassigned_by_set(partitions: Mapping[str, int], topics: list[str],
                       assigned: list[TopicPartition]) -> list[TopicPartition] | None:
    """``_unassigned``'s walk as a set difference, where the two agree: every assigned
    partition exists and none is assigned twice. (The walk stops matching at a duplicate, or at
    a partition past its topic's count, and keeps every later partition: then None, and the
    walk runs.)"""
    names = set(map(itemgetter(0), assigned))
    if not names <= partitions.keys():
        return None
    if len(names) == 1:                         # one topic: its partition numbers, in C
        (name,) = names
        numbers = set(map(itemgetter(1), assigned))
        if min(numbers) < 0 or max(numbers) >= partitions[name]:
            return None
        taken = {name: numbers}
    else:
        taken = {t: set() for t in names}
        for t, p in assigned:
            if not 0 <= p < partitions[t]:
                return None
            taken[t].add(p)
    if sum(map(len, taken.values())) != len(assigned):
        return None                             # a partition assigned twice
    out: list[TopicPartition] = []
    for t in topics:
        if t not in taken:
            out.extend(zip(repeat(t), range(partitions[t])))
        else:
            out.extend(zip(repeat(t), sorted(set(range(partitions[t])) - taken[t])))
    return out


def sticky_assign(partitions: Mapping[str, int], members: Sequence[StickyMember], *,
                  cooperative: bool = False, racks: Racks | None = None
                  ) -> dict[str, list[TopicPartition]]:
    """``StickyAssignor`` (eager) or ``CooperativeStickyAssignor``: each member id's
    partitions, in Kafka's order. The cooperative one leaves out the partitions that change
    owner: their old owner gives them up, and a second rebalance assigns them. When members
    subscribe to the same topics, Kafka's constrained builder runs (``_constrained``);
    otherwise its general one (``sticky_general.general_assign``). ``racks``: the partitions'
    replicas' racks (``Racks``), which with the members' racks may make either builder
    rack-aware (KIP-881, ``_RackInfo``)."""
    group = _group(members)
    have = {t: n for t, n in _partitions_per_topic(group, partitions)}
    rack = _RackInfo.of(group, have, racks)
    sticky_group = {mid: m if isinstance(m, StickyMember) else StickyMember(
        m.member_id, m.topics, m.instance_id, rack=m.rack) for mid, m in group.items()}
    claimed = {mid: _claimed(m, not cooperative) for mid, m in sticky_group.items()}
    one = _one_topic_claims(have, claimed)
    equal, owned_by, multiple = _owned_by_member(sticky_group, set(have), not cooperative,
                                                 claimed, apart=True if one else None)
    if equal:
        assignment, transferring = _constrained(have, owned_by, multiple, rack, one)
    else:
        claims = {mid: (claimed[mid], m.generation) for mid, m in sticky_group.items()}
        top = max((DEFAULT_GENERATION if g is None else g for _, g in claims.values()),
                  default=DEFAULT_GENERATION)
        try:
            assignment = general_assign(have, {mid: m.topics for mid, m in sticky_group.items()},
                                        owned_by, claims, top, rack.consumer_racks,
                                        rack.partition_racks)
        except GeneralAssignorError as exc:
            raise KafkaAssignorError(exc.kind, str(exc)) from exc
        transferring = _transferring(sticky_group, assignment) if cooperative else {}
    if cooperative:
        for tp, consumer in transferring.items():
            _remove_first(assignment[consumer], tp)
    return assignment


def _transferring(group: Mapping[str, StickyMember], assignment: Mapping[str, list[TopicPartition]]
                  ) -> dict[TopicPartition, str]:
    """``CooperativeStickyAssignor.computePartitionsTransferringOwnership`` (after the general
    builder): the partitions given to a member that did not own them and taken from one that
    did."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for consumer, given in assignment.items():
        owned = group[consumer].owned
        owned_set, given_set = set(owned), set(given)
        for tp in given:
            if tp not in owned_set:
                added[tp] = consumer
        revoked.update(tp for tp in owned if tp not in given_set)
    return {tp: c for tp, c in added.items() if tp in revoked}


def cooperative_sticky_assign(partitions: Mapping[str, int], members: Sequence[Member], *,
                              racks: Racks | None = None) -> dict[str, list[TopicPartition]]:
    """``CooperativeStickyAssignor``: the first of the cooperative protocol's two rebalances."""
    return sticky_assign(partitions, [m if isinstance(m, StickyMember) else StickyMember(
        m.member_id, m.topics, m.instance_id, rack=m.rack) for m in members], cooperative=True,
        racks=racks)


def eager_sticky_assign(partitions: Mapping[str, int], members: Sequence[Member], *,
                        racks: Racks | None = None) -> dict[str, list[TopicPartition]]:
    """``StickyAssignor``."""
    return sticky_assign(partitions, [m if isinstance(m, StickyMember) else StickyMember(
        m.member_id, m.topics, m.instance_id, rack=m.rack) for m in members], racks=racks)


ASSIGNORS["sticky"] = eager_sticky_assign
ASSIGNORS["cooperative-sticky"] = cooperative_sticky_assign


# ------------------------------------------------------------------ KIP-848: the server side

@dataclass(frozen=True)
class Topic:
    """A topic as the group coordinator knows it: its name, partition count and topic id (the
    id's two 64-bit halves, which decide the coordinator's hash order)."""

    name: str
    partitions: int
    topic_id: tuple[int, int]


KAFKA_JVM = 25
"""The Java the server-side assignors' ports assume by default (``jvm``): the release Kafka's
documentation recommends running it on, "the most recent LTS release": Java 21 in the 4.0 and
4.1 docs, Java 25 from 4.2 on (``kafka.apache.org/42/operations/java-version``). Any Java from
19 on sizes ``HashSet`` copies alike (``javamath.JAVA_RESIZED_COPIES``), so 21 and 25 answer the
same; 17 differs (issue 33: about one case in 170 of the uniform vectors)."""


def _uuid_hash(u: tuple[int, int]) -> int:
    return java_uuid_hash(*u)


def _homogeneous(topics: Sequence[Topic], members: Sequence[tuple[str, object]],
                 subscriptions: Mapping[str, Sequence[str]] | None) -> list[Topic] | None:
    """The topics every member subscribes to when all subscribe to the same ones (the
    coordinator's ``SubscriptionType.HOMOGENEOUS``), else ``None``. No ``subscriptions``: every
    member subscribes to every topic."""
    if subscriptions is None:
        return list(topics)
    sets = {frozenset(subscriptions.get(m, ())) for m, _ in members}
    if len(sets) > 1:
        return None
    common = next(iter(sets), frozenset())
    missing = sorted(common - {t.name for t in topics})
    if missing:
        raise KafkaAssignorError("PartitionAssignorException",
                                 f"Members are subscribed to topic {missing[0]} which doesn't "
                                 "exist in the topic metadata.")
    return [t for t in topics if t.name in common]


def uniform_assign(topics: Sequence[Topic],
                   members: Sequence[tuple[str, Mapping[str, Sequence[int]]]], *,
                   extra_to_first: bool = False,
                   subscriptions: Mapping[str, Sequence[str]] | None = None,
                   jvm: int = KAFKA_JVM, vanished: Sequence[Topic] = ()
                   ) -> dict[str, dict[str, list[int]]]:
    """KIP-848's ``UniformAssignor`` on the broker (kafka-group-coordinator). For a group whose
    members all subscribe to the same topics (``UniformHomogeneousAssignmentBuilder``): ``members``
    are (member id, its current target assignment: topic name -> partitions), in the order the
    coordinator put them into its map. Each member keeps what it has up to its quota (one more
    for ``partitions % members`` of them: in the coordinator's order, a member that can fill
    the extra slot from what it holds keeps it, one that cannot passes it on while enough
    members follow); what it has beyond is revoked; the free partitions (topics in the
    coordinator's topic-id order, then the revoked ones) fill the members below quota in order.
    Returns each member's partitions per topic, sorted (the coordinator's are sets).

    ``extra_to_first``: as in 4.0, where the first ``partitions % members`` members in the
    coordinator's order get the extra slot whatever they hold (4.1 and later pass it on, which
    moves fewer partitions).

    ``subscriptions``: each member's topics, when they may differ; a group whose members
    subscribe to different topics goes to the coordinator's heterogeneous builder
    (``uniform_heterogeneous``), the same from 4.0 to 4.3.

    ``vanished``: topics gone from the metadata that members' current assignments may still
    hold (their ids place them in those maps, whose order decides which partitions a member
    keeps; partition counts unused). The coordinator drops them from every subscription, and so
    from the new assignment; a member still subscribed to one fails as Kafka does.

    ``jvm``: the Java the coordinator runs on (``KAFKA_JVM`` by default). The builder iterates
    ``new HashSet<>(subscription)`` of topic ids and each member's partitions, copies whose
    table Java 19 and later size smaller than Java 17 (``javamath.java_copy_threshold``), so the
    order in which free partitions are dealt, and which of a member's partitions it keeps, can
    differ: with topics of ids (0, 2) ... (0, 12) and (0, 17), one partition each, and members
    ``m0`` and ``m1`` holding nothing, ``m0`` gets the first six of the ids' order:

    >>> ts = [Topic(f"t{i}", 1, (0, i)) for i in (*range(2, 13), 17)]
    >>> sorted(uniform_assign(ts, [("m0", {}), ("m1", {})], jvm=17)["m0"])
    ['t2', 't3', 't4', 't5', 't6', 't7']
    >>> sorted(uniform_assign(ts, [("m0", {}), ("m1", {})], jvm=25)["m0"])
    ['t17', 't2', 't3', 't4', 't5', 't6']
    """
    every = topics
    chosen = _homogeneous(topics, members, subscriptions)
    if chosen is None:
        try:
            return uniform_heterogeneous_assign({t.name: t.partitions for t in topics},
                                                {t.name: t.topic_id for t in topics},
                                                members, subscriptions or {})
        except HeterogeneousAssignorError as exc:
            raise KafkaAssignorError(exc.kind, str(exc)) from exc
    topics = chosen
    ids = java_hash_order([m for m, _ in members])
    current = {m: owned for m, owned in members}
    by_name = {t.name: t for t in (*vanished, *every)}
    subscribed_names = {t.name for t in topics}
    if not ids or not topics:
        return {}
    # subscribedTopicIds: new HashSet<>(the first member's subscription), itself a HashSet
    # filled by add in the topics' order
    by_id = {t.topic_id: t for t in topics}
    source = java_set_order([t.topic_id for t in topics], hash=_uuid_hash,
                            compare=java_uuid_compare)
    subscribed = [by_id[u] for u in java_set_order(source, copy=True, jvm=jvm, hash=_uuid_hash,
                                                   compare=java_uuid_compare)]
    assigned = {(t, p) for owned in current.values() for t, ps in owned.items() for p in ps
                if t in subscribed_names}
    unassigned: list[TopicPartition] = [(t.name, p) for t in subscribed
                                        for p in range(t.partitions) if (t.name, p) not in assigned]
    total = sum(t.partitions for t in topics)
    min_quota, extra = divmod(total, len(ids))
    target: dict[str, dict[str, list[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member in enumerate(ids):
        quota, got_extra = min_quota, extra > 0
        if got_extra:
            quota += 1
        owned = current.get(member, {})
        # its assignment: a HashMap of topic id to an unmodifiable HashSet copied from the
        # ascending partitions, filled by put in the topics' order
        name_of = {by_name[n].topic_id: n for n, ps in owned.items() if ps}
        kept: dict[str, list[int]] = {}
        for u in java_set_order(list(name_of), hash=_uuid_hash, compare=java_uuid_compare):
            name = name_of[u]
            if name not in subscribed_names:
                continue                                # a topic it no longer subscribes to
            parts = list(owned[name])
            if len(parts) <= quota:
                quota -= len(parts)
                kept[name] = parts
                continue
            mine = []
            for p in java_set_order(sorted(parts), copy=True, jvm=jvm, hash=int,
                                    compare=java_integer_compare):
                if quota > 0:
                    quota -= 1
                    mine.append(p)
                else:
                    unassigned.append((name, p))
            kept[name] = mine
        if quota > 0 and got_extra and len(ids) - index > extra and not extra_to_first:
            # the extra partition stays free for a member that already holds one more (4.x):
            # enough members follow to take every remaining extra
            quota -= 1
            got_extra = False
        if quota > 0:
            unfilled.append((member, quota))
        if got_extra:
            extra -= 1
        target[member] = kept
    at = 0
    for member, quota in unfilled:
        for _ in range(quota):
            if at >= len(unassigned):
                break
            name, p = unassigned[at]
            at += 1
            target[member].setdefault(name, []).append(p)
    if at < len(unassigned):
        raise KafkaAssignorError("PartitionAssignorException", "Partitions were left unassigned")
    return {m: {n: sorted(ps) for n, ps in kept.items() if ps} for m, kept in target.items()}


def server_range_assign(topics: Sequence[Topic],
                        members: Sequence[tuple[str, Mapping[str, Sequence[int]]]], *,
                        subscriptions: Mapping[str, Sequence[str]] | None = None,
                        instances: Mapping[str, str | None] | None = None
                        ) -> dict[str, dict[str, list[int]]]:
    """KIP-848's ``RangeAssignor`` on the broker (kafka-group-coordinator 4.x), no racks: the
    members sorted by member id (static ones first, by instance id: ``instances``, each member's
    ``group.instance.id`` or ``None``; the ``server-range-static`` vectors have them), and
    each topic dealt to the members subscribed to it in contiguous ranges, the first
    ``partitions % subscribers`` one partition more: the client's range shares, computed once for
    the group. It is not sticky: the current assignments play no part (same arguments and result
    as ``uniform_assign``; without ``subscriptions`` every member subscribes to every topic)."""
    static = {m: i for m, i in (instances or {}).items() if i is not None}

    def order(a: str, b: str) -> int:                   # RangeAssignor.sortMemberIds
        if a in static and b in static:
            return java_string_compare(static[a], static[b])
        if a in static or b in static:
            return -1 if a in static else 1
        return java_string_compare(a, b)

    # memberIds() in the coordinator's HashMap order, then a stable sort
    ids = sorted(java_hash_order([m for m, _ in members]), key=cmp_to_key(order))
    target: dict[str, dict[str, list[int]]] = {m: {} for m in ids}
    if not ids:
        return {}
    names = {t.name for t in topics}
    for m in ids:
        for name in (subscriptions or {}).get(m, ()):
            if name not in names:
                raise KafkaAssignorError("PartitionAssignorException",
                                         "Member is subscribed to a non-existent topic")
    for t in topics:
        subscribed = [m for m in ids
                      if subscriptions is None or t.name in subscriptions.get(m, ())]
        if not subscribed:
            continue
        per, extra = divmod(t.partitions, len(subscribed))
        start = 0
        for m in subscribed:
            quota = per + (1 if extra > 0 else 0)
            extra -= 1 if extra > 0 else 0
            end = min(start + quota, t.partitions)
            if start < end:
                target[m][t.name] = list(range(start, end))
            start = end
    return target
