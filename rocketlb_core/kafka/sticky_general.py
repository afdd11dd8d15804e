"""Kafka's sticky assignors when members subscribe to different topics: the general assignment
builder of ``AbstractStickyAssignor`` (kafka-clients), ported step for step and checked against
the released classes (``tests/vectors/kafka/kafka-*sticky-unequal-*.jsonl.gz``).

Where every member subscribes to the same topics, Kafka runs its constrained builder
(``assignors._constrained``: quotas, then round robin). Otherwise it runs this one, an older and
slower search:

1. each member keeps what it owned of the topics it still subscribes to (a partition of a topic
   it dropped is revoked, and the first attempt at balance below is skipped);
2. the free partitions, topics with the fewest potential members first, each go to the member
   with the fewest partitions that subscribes to its topic;
3. while some member could take a partition from one holding two more than itself, partitions
   move, one at a time, to the emptiest member that can take them: first only the partitions
   that were free, then all of them. A partition goes back to the member of an older
   generation that claimed it when that one has two fewer; a move that would undo an earlier
   move between the same two members of the same topic moves that earlier partition back
   instead (``PartitionMovements``, the stickiness rule);
4. if the moves did not lower the balance score (the sum over member pairs of the difference
   in partition counts), the assignment before them stands.

The order of a member's partitions follows Kafka's lists (kept, then added in the order given),
and the one Java hash order that decides an outcome, which partition of a set of earlier moves
is moved back (``_JavaHashSet``), is modelled. Where Kafka throws (a ``NullPointerException`` when
an older generation's claimant can no longer take partitions), ``KafkaAssignorError`` says so.

On some inputs Kafka's step 3 never ends: the stickiness rule and the balance rule move
partitions round a cycle (the same loop librdkafka's port of this code was reported for,
confluentinc/librdkafka#4783). The vectors record such a case as ``NoTermination``: Kafka's
classes had not returned after 20 s, where a case takes milliseconds. The port detects it
exactly: the passes are deterministic, so a pass that starts from a state an earlier pass
started from repeats forever, and it raises ``KafkaAssignorError("NoTermination")``.
With racks (KIP-881, ``general_assign``'s ``consumer_racks``), step 1 also revokes what a
member owns off its rack, step 2 first gives partitions to members of their racks, and step 3
prefers a partition whose member is in its rack when another member of that rack has two fewer.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Mapping, Sequence

from rocketlb_core.javamath import JavaHashMap, java_string_hash, java_string_key, wrap32

TopicPartition = tuple[str, int]



class GeneralAssignorError(RuntimeError):
    """Where Kafka's general builder throws (``kind``: the Java exception's simple name)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _npe(what: str) -> GeneralAssignorError:
    return GeneralAssignorError("NullPointerException", what)


def topic_partition_hash(tp: TopicPartition) -> int:
    """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return wrap32(31 * (31 + tp[1]) + java_string_hash(tp[0]))


def _not_comparable(a: object, b: object) -> None:
    """``TopicPartition`` is not ``Comparable``: a tree bin orders it by hash alone."""
    return None


class _JavaHashSet:
    """A ``java.util.HashSet<TopicPartition>``: ``javamath.JavaHashMap``, exact (tables, bins,
    trees, removals), keyed by ``TopicPartition.hashCode``. Two partitions with equal hash codes
    in one tree bin would be ordered by ``System.identityHashCode``, which nothing can
    reproduce (``JavaHashMap.undefined``)."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table = JavaHashMap(hash=topic_partition_hash, compare=_not_comparable)

    def add(self, tp: TopicPartition) -> None:
        self.table.put(tp)

    def discard(self, tp: TopicPartition) -> None:
        self.table.remove(tp)

    def __len__(self) -> int:
        return len(self.table)

    def first(self) -> TopicPartition:
        best = self.table.first()
        if best is None:
            raise GeneralAssignorError("NoSuchElementException", "empty movement set")
        return best  # type: ignore[no-any-return]


class _Movements:
    """``PartitionMovements``: where each moved partition came from and went, per topic and
    pair of members."""

    def __init__(self) -> None:
        self.moves: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], _JavaHashSet]] = {}

    def _remove(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per_topic = self.by_topic[tp[0]]
        per_topic[pair].discard(tp)
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[tp[0]]
        return pair

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, _JavaHashSet()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, _ = self._remove(tp)
            if src != new:
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def state(self, current: Mapping[str, list[TopicPartition]]) -> tuple[object, ...]:
        """Everything the next reassignment pass depends on: each member's partitions in order,
        and the recorded moves with each set's Java state (``JavaHashMap.state``). The algorithm
        is deterministic, so a pass that starts from a state an earlier pass started from
        repeats forever."""
        sets = tuple(sorted((t, pair, hs.table.state())
                            for t, pairs in self.by_topic.items() for pair, hs in pairs.items()))
        return (tuple(tuple(v) for v in current.values()), tuple(sorted(self.moves.items())), sets)

    def actual(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """``getTheActualPartitionToBeMoved``: a partition of the same topic that moved the
        other way between the same members goes back instead."""
        per_topic = self.by_topic.get(tp[0])
        if per_topic is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per_topic.get((new, old))
        return tp if reverse is None else reverse.first()


class _SortedMembers:
    """The ``TreeSet`` of members by (partition count, member id)."""

    def __init__(self, sizes: Mapping[str, list[TopicPartition]]) -> None:
        self.assignment = sizes
        self.keys: dict[str, bytes] = {}
        self.entries: list[tuple[int, bytes, str]] = []

    def _entry(self, member: str) -> tuple[int, bytes, str]:
        key = self.keys.get(member)
        if key is None:
            key = self.keys[member] = java_string_key(member)
        mine = self.assignment.get(member)
        if mine is None:
            raise _npe(f"member {member!r} is not in the assignment")
        return len(mine), key, member

    def add(self, member: str) -> None:
        entry = self._entry(member)
        i = bisect_left(self.entries, entry)
        if i == len(self.entries) or self.entries[i] != entry:
            insort(self.entries, entry)

    def remove(self, member: str) -> None:
        if not self.entries:
            return
        entry = self._entry(member)
        i = bisect_left(self.entries, entry)
        if i < len(self.entries) and self.entries[i] == entry:
            del self.entries[i]

    def __iter__(self) -> Iterator[str]:
        return (e[2] for e in list(self.entries))

    def first(self) -> str:
        return self.entries[0][2]

    def last(self) -> str:
        return self.entries[-1][2]


def general_assign(partitions: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]],
                   owned_by: dict[str, list[TopicPartition]],
                   claims: Mapping[str, tuple[Sequence[TopicPartition], int | None]],
                   max_generation: int, consumer_racks: Mapping[str, str] | None = None,
                   partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None
                   ) -> dict[str, list[TopicPartition]]:
    """``GeneralAssignmentBuilder.build``.

    ``partitions``: the subscribed topics with metadata and their partition counts;
    ``subscriptions``: each member's topics, in the group's (``HashMap``) order; ``owned_by``:
    what each member validly owned (``allSubscriptionsEqual``'s output, modified in place as
    Kafka does); ``claims``: each member's claimed partitions and generation as its member data
    gives them (``None``: no generation); ``max_generation``: the highest claimed;
    ``consumer_racks`` and ``partition_racks``: ``RackInfo``'s, when the assignment is
    rack-aware (KIP-881): an owned partition off its member's rack is revoked, free partitions
    go first to members of their racks, and a move prefers a partition on a member of its rack
    that has two fewer."""
    racks_of = consumer_racks or {}
    replicas_of = partition_racks or {}

    def mismatch(member: str, tp: TopicPartition) -> bool:
        mine = racks_of.get(member)
        if mine is None:
            return False
        theirs = replicas_of.get(tp)
        return theirs is None or mine not in theirs

    topic_members: dict[str, list[str]] = {t: [] for t in partitions}
    member_topics: dict[str, list[str]] = {}
    for member, topics in subscriptions.items():
        mine: list[str] = []
        member_topics[member] = mine
        for t in topics:
            if t in partitions:
                mine.append(t)
                topic_members[t].append(member)
        owned_by.setdefault(member, [])
    current = owned_by
    owner: dict[TopicPartition, str] = {}
    for member, tps in current.items():
        for tp in tps:
            owner[tp] = member
    topic_keys = {t: java_string_key(t) for t in partitions}
    sorted_topics = sorted(partitions, key=lambda t: (len(topic_members[t]), topic_keys[t]))
    all_partitions = [(t, p) for t in sorted_topics for p in range(partitions[t])]
    total = sum(partitions.values())
    subscribed_sets = {m: set(ts) for m, ts in subscriptions.items()}
    topic_sets = {m: set(ts) for m, ts in member_topics.items()}

    # prepopulateCurrentAssignments: the latest older-generation claim of each partition
    previous: dict[TopicPartition, tuple[str, int]] = {}
    for member in subscriptions:
        claimed, generation = claims.get(member, ((), None))
        if generation is not None and generation < max_generation:
            gen = generation
        elif generation is None and max_generation > -1:
            gen = -1
        else:
            continue
        for tp in claimed:
            had = previous.get(tp)
            if had is None or gen > had[1]:
                previous[tp] = (member, gen)

    # assignOwnedPartitions
    revocation_required = False
    assigned: list[TopicPartition] = []
    for member, tps in current.items():
        kept: list[TopicPartition] = []
        for tp in tps:
            if tp[0] not in topic_members:
                owner.pop(tp, None)
            elif tp[0] not in subscribed_sets[member] or mismatch(member, tp):
                revocation_required = True
            else:
                kept.append(tp)
                assigned.append(tp)
        tps[:] = kept

    # getUnassignedPartitions (the very list of all partitions when nothing is assigned)
    if not assigned:
        unassigned = all_partitions
    else:
        assigned.sort(key=lambda tp: (len(topic_members[tp[0]]), topic_keys[tp[0]], tp[1]))
        unassigned = []
        k, direct = 0, False
        for tp in all_partitions:
            if direct or assigned[k] != tp:
                unassigned.append(tp)
            elif k + 1 < len(assigned):
                k += 1
            else:
                direct = True

    members = _SortedMembers(current)
    for member in current:
        members.add(member)

    def size(member: str | None) -> int:
        mine = current.get(member) if member is not None else None
        if mine is None:
            raise _npe(f"no current assignment for member {member!r}")
        return len(mine)

    def max_size(member: str) -> int:
        topics = member_topics[member]
        if len(topics) == len(partitions):
            return total
        return sum(partitions[t] for t in topics)

    def balanced() -> bool:
        if size(members.first()) >= size(members.last()) - 1:
            return True
        holder = {tp: m for m, tps in current.items() for tp in tps}
        for member in members:
            count = size(member)
            if count == max_size(member):
                continue
            mine = set(current[member])
            for t in member_topics[member]:
                for p in range(partitions[t]):
                    if (t, p) in mine:
                        continue
                    if count + 1 < size(holder.get((t, p))):
                        return False
        return True

    movements = _Movements()

    def process(tp: TopicPartition, new: str | None) -> None:
        old = owner.get(tp)
        if new is None or old is None:
            raise _npe(f"moving {tp} from {old!r} to {new!r}")
        members.remove(old)
        members.remove(new)
        movements.move(tp, old, new)
        mine = current[old]
        if tp in mine:
            mine.remove(tp)
        current[new].append(tp)
        owner[tp] = new
        members.add(new)
        members.add(old)

    def reassign(tp: TopicPartition, new: str | None = None) -> None:
        if new is None:
            new = next((m for m in members if tp[0] in topic_sets[m]), None)
        old = owner.get(tp)
        if old is None or new is None:
            raise _npe(f"reassigning {tp}")
        process(movements.actual(tp, old, new), new)

    def perform(reassignable: list[TopicPartition]) -> bool:
        performed = False
        seen: set[tuple[object, ...]] = set()
        while True:
            state = movements.state(current)
            if state in seen:
                raise GeneralAssignorError(
                    "NoTermination", "the reassignment passes came back to an earlier state: "
                    "Kafka's loop never ends on this input")
            seen.add(state)
            modified = False
            for tp in reassignable:
                if balanced():
                    break
                member = owner.get(tp)
                prev = previous.get(tp)
                if prev is not None and size(member) > size(prev[0]) + 1:
                    reassign(tp, prev[0])
                    performed = modified = True
                    continue
                mine = size(member)
                found = False
                near = racks_of.get(member) if member is not None else None
                if near is not None and near in replicas_of.get(tp, frozenset()):
                    for other in topic_members[tp[0]]:     # a member of its rack first
                        theirs = racks_of.get(other)
                        if theirs is None or theirs not in replicas_of[tp]:
                            continue
                        if mine > size(other) + 1:
                            reassign(tp)
                            performed = modified = found = True
                            break
                if not found:
                    for other in topic_members[tp[0]]:
                        if mine > size(other) + 1:
                            reassign(tp)
                            performed = modified = True
                            break
            if not modified:
                return performed

    # balance
    initializing = size(members.last()) == 0

    def maybe_assign(tps: list[TopicPartition], by_rack: bool) -> list[TopicPartition]:
        """``maybeAssign``: each partition to the emptiest member that can take it (of its
        rack, ``by_rack``); returns the partitions left."""
        left = []
        for tp in tps:
            if not topic_members[tp[0]]:
                left.append(tp)
                continue
            for member in members:
                if tp[0] in topic_sets[member] and not (by_rack and mismatch(member, tp)):
                    members.remove(member)
                    current[member].append(tp)
                    owner[tp] = member
                    members.add(member)
                    break
            else:
                left.append(tp)
        return left

    # first with rack matching, then the rest without
    maybe_assign(maybe_assign(unassigned, True) if racks_of else unassigned, False)
    fixed_topics = {t for t, ms in topic_members.items() if len(ms) < 2}
    if fixed_topics:
        all_partitions[:] = [tp for tp in all_partitions if tp[0] not in fixed_topics]
        if unassigned is not all_partitions:
            unassigned[:] = [tp for tp in unassigned if tp[0] not in fixed_topics]
    fixed: dict[str, list[TopicPartition]] = {}
    for member in member_topics:
        if size(member) < max_size(member):
            continue
        if any(len(topic_members[tp[0]]) >= 2 for tp in current[member]):
            continue
        members.remove(member)
        fixed[member] = current.pop(member)
    before = {m: list(tps) for m, tps in current.items()}
    before_owner = dict(owner)
    if not revocation_required:
        perform(unassigned)
    performed = perform(all_partitions)
    if not initializing and performed and _score(current) >= _score(before):
        current.clear()
        current.update({m: list(tps) for m, tps in before.items()})
        owner.clear()
        owner.update(before_owner)
    current.update(fixed)
    return current


def _score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """``getBalanceScore``: the sum over member pairs of the difference in partition counts."""
    sizes = sorted(len(tps) for tps in assignment.values())
    score, running = 0, 0
    for i, s in enumerate(sizes):
        score += s * i - running
        running += s
    return score
