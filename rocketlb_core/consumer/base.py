"""The allocation contract and upstream's shared argument check (spec 3.1).

A strategy is a frozen callable object with a ``name`` and upstream's per-client method
``allocate(consumer_group, current_cid, mq_all, cid_all) -> list`` (one consumer's share, computed
from that consumer's own view). ``assign_all`` returns every member's share in one pass: the
whole-group entry point, which builds shared structures (a hash ring) once.

Strategies do not sort: ``RebalanceImpl`` passes ``mq_all`` sorted by ``MessageQueue.compareTo``
and ``cid_all`` in Java string order (``rebalance_view`` does that sort).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from rocketlb_core.model import MessageQueue, sort_client_ids, sort_queues

Assignment = dict[str, list[MessageQueue]]
"""Client id -> its share, in the order the strategy returns it."""


class AllocationArgumentError(ValueError):
    """Upstream's ``IllegalArgumentException`` (the message is part of the contract)."""


@runtime_checkable
class AllocateStrategy(Protocol):
    """What every allocation strategy offers (``AllocateMessageQueueStrategy``)."""

    @property
    def name(self) -> str: ...

    def allocate(self, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None,
                 cid_all: Sequence[str] | None) -> list[MessageQueue] | None: ...


@runtime_checkable
class WholeGroupStrategy(AllocateStrategy, Protocol):
    """A strategy that also computes every member's share in one pass (Kafka's server-side
    ``assign(GroupSpec)`` shape); ``previous`` is the last assignment, for sticky ones."""

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str],
                   previous: Mapping[str, Sequence[MessageQueue]] | None = None
                   ) -> Assignment: ...


def check(current_cid: str | None, mq_all: Sequence[MessageQueue] | None,
          cid_all: Sequence[str] | None) -> bool:
    """``AbstractAllocateMessageQueueStrategy.check``: raise on empty arguments; ``False`` (share
    nothing) when ``current_cid`` is not in ``cid_all``. A blank id such as ``" "`` is accepted."""
    if current_cid is None or current_cid == "":
        raise AllocationArgumentError("currentCID is empty")
    if not mq_all:
        raise AllocationArgumentError("mqAll is null or mqAll empty")
    if not cid_all:
        raise AllocationArgumentError("cidAll is null or cidAll empty")
    return current_cid in cid_all


def checked(current_cid: str | None, mq_all: Sequence[MessageQueue] | None,
            cid_all: Sequence[str] | None
            ) -> tuple[str, Sequence[MessageQueue], Sequence[str]] | None:
    """``check`` with the arguments narrowed: ``None`` when this consumer gets nothing."""
    if not check(current_cid, mq_all, cid_all):
        return None
    assert current_cid is not None and mq_all is not None and cid_all is not None
    return current_cid, mq_all, cid_all


class _CheckedShare:
    """For strategies defined per consumer, as upstream's subclasses of
    ``AbstractAllocateMessageQueueStrategy`` are: ``allocate`` is upstream's argument check
    (``checked``: nothing when this consumer is not in the view), then the strategy's ``share``
    of the narrowed arguments."""

    __slots__ = ()

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        raise NotImplementedError

    def allocate(self, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None,
                 cid_all: Sequence[str] | None) -> list[MessageQueue]:
        args = checked(current_cid, mq_all, cid_all)
        return [] if args is None else self.share(consumer_group, *args)


class _WholeGroupShare:
    """For strategies defined on the whole group (``assign_all``): one consumer's share is its
    entry in the group's assignment, after upstream's argument check."""

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str],
                   previous: Mapping[str, Sequence[MessageQueue]] | None = None) -> Assignment:
        raise NotImplementedError

    def allocate(self, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None, cid_all: Sequence[str] | None,
                 previous: Mapping[str, Sequence[MessageQueue]] | None = None
                 ) -> list[MessageQueue]:
        args = checked(current_cid, mq_all, cid_all)
        if args is None:
            return []
        cid, mqs, cids = args
        return self.assign_all(consumer_group, mqs, cids, previous)[cid]


def unique_ids(cid_all: Sequence[str]) -> list[str]:
    """The distinct ids of a view, in first-occurrence order (duplicates share one result)."""
    return list(dict.fromkeys(cid_all))


def assign_all(strategy: AllocateStrategy, consumer_group: str,
               mq_all: Sequence[MessageQueue], cid_all: Sequence[str],
               previous: Mapping[str, Sequence[MessageQueue]] | None = None) -> Assignment:
    """Every member's share under one consistent view, computed in one pass where the strategy
    supports it (its own ``assign_all``), else by calling ``allocate`` once per distinct id.

    Duplicated ids appear once: upstream gives every duplicate the same share (spec 9.1).
    ``previous`` is passed to strategies that use it (sticky ones) and ignored by the others.
    """
    if isinstance(strategy, WholeGroupStrategy):
        return strategy.assign_all(consumer_group, mq_all, cid_all, previous)
    out: Assignment = {}
    for cid in unique_ids(cid_all):
        share = strategy.allocate(consumer_group, cid, mq_all, cid_all)
        out[cid] = list(share or [])
    return out


def rebalance_view(mq_set: Sequence[MessageQueue] | frozenset[MessageQueue] | set[MessageQueue],
                   cid_all: Sequence[str]) -> tuple[list[MessageQueue], list[str]]:
    """What ``RebalanceImpl.rebalanceByTopic`` hands a strategy: the de-duplicated queue set
    sorted by ``compareTo``, and the id list sorted in Java string order (duplicates kept)."""
    return sort_queues(set(mq_set)), sort_client_ids(cid_all)
