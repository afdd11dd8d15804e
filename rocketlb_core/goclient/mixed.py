"""A consumer group whose members run different clients (issue 47): each member computes its own
share with its own client's strategy on its own client's order of the same queues and ids, as
real members do; per queue, who took it. Java members run the package's Java strategies (on
``sorted`` queues, ids in Java's order), Go members ``goclient.allocate`` (on ``doBalance``'s
order). Where the two clients compute the same function (AVG, AVG_BY_CIRCLE) every queue has
one owner; where they do not (the consistent hash, the machine room) queues are held twice or
by nobody.

Standard library only.

>>> from rocketlb_core.model import MessageQueue
>>> qs = [MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]
>>> members = {"10.0.0.1@j1": "java", "10.0.0.2@g1": "go", "10.0.0.3@j2": "java"}
>>> owners = holders("AVG", qs, members)
>>> sorted({len(v) for v in owners.values()})
[1]
>>> owners = holders("CONSISTENT_HASH", qs, members)
>>> sum(len(v) != 1 for v in owners.values()) > 0
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from rocketlb_core.goclient import allocate as ga
from rocketlb_core.javamath import java_string_key
from rocketlb_core.model import MessageQueue

GO_NAMES = {"AVG": "AllocateByAveragely", "AVG_BY_CIRCLE": "AllocateByAveragelyCircle",
            "CONSISTENT_HASH": "AllocateByConsistentHash(10)",
            "MACHINE_ROOM": "AllocateByMachineRoom"}
"""The strategies both clients have, by the Java name, with the Go client's name."""
ROOMS = ("sh",)
"""The rooms every member of a MACHINE_ROOM group consumes (``consumeridcs``)."""


def _go(name: str) -> ga.Strategy:
    return {"AVG": ga.averagely, "AVG_BY_CIRCLE": ga.averagely_circle,
            "CONSISTENT_HASH": ga.consistent_hash(10),
            "MACHINE_ROOM": ga.machine_room(list(ROOMS))}[name]


def _java(name: str) -> Any:
    from rocketlb_core.consumer.registry import make

    return make(name, consumeridcs=list(ROOMS)) if name == "MACHINE_ROOM" else make(name)


def holders(strategy: str, mq_all: Sequence[MessageQueue],
            members: Mapping[str, str], group: str = "g") -> dict[MessageQueue, list[str]]:
    """Per queue of ``mq_all``, the members (client id to ``"java"`` or ``"go"``) whose share
    holds it under ``strategy`` (a name of ``GO_NAMES``), each computing as its client does."""
    java_qs, java_ids = sorted(mq_all), sorted(members, key=java_string_key)
    go = ga.JavaView(_go(strategy))
    java = _java(strategy)
    out: dict[MessageQueue, list[str]] = {q: [] for q in java_qs}
    for cid in java_ids:
        if members[cid] == "go":
            share = go.allocate(group, cid, java_qs, java_ids)
        else:
            share = java.allocate(group, cid, java_qs, java_ids)
        for q in share or ():
            out.setdefault(q, []).append(cid)
    return out


def random_groups(seed: int, count: int) -> list[tuple[list[MessageQueue], dict[str, str]]]:
    """``count`` random mixed groups (seeded): 1 to 4 brokers (named ``room@broker``, rooms
    alternating ``hz`` and ``sh``) of 1 to 8 queues, 2 to 8 members, each Java or Go with at
    least one of each."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        brokers = [f"{'hz' if b % 2 == 0 else 'sh'}@broker-{'abcd'[b]}"
                   for b in range(rng.randint(1, 4))]
        qs = [MessageQueue("TopicTest", b, i) for b in brokers
              for i in range(rng.randint(1, 8))]
        n = rng.randint(2, 8)
        langs = ["java", "go"] + [rng.choice(("java", "go")) for _ in range(n - 2)]
        rng.shuffle(langs)
        members = {f"10.0.{rng.randint(0, 9)}.{i + 1}@{rng.randint(1, 99999)}": lang
                   for i, lang in enumerate(langs)}
        out.append((qs, members))
    return out


def agreement_rows(seed: int = 47, count: int = 500) -> list[dict[str, Any]]:
    """Per strategy of ``GO_NAMES``, over the same ``random_groups``: how many end with every
    queue it allocates held once (for MACHINE_ROOM: the queues of ``ROOMS``, and only the
    groups that have some, ``groups``), and how many hold a queue twice, or leave one to
    nobody."""
    groups = random_groups(seed, count)
    rows = []
    for name, go_name in GO_NAMES.items():
        once = twice = nobody = 0
        chosen = [(qs, m) for qs, m in groups if name != "MACHINE_ROOM"
                  or any(q.broker_name.split("@")[0] in ROOMS for q in qs)]
        for qs, members in chosen:
            owners = holders(name, qs, members)
            wanted = [q for q in qs if name != "MACHINE_ROOM"
                      or q.broker_name.split("@")[0] in ROOMS]
            two = any(len(v) > 1 for v in owners.values())
            none = any(not owners.get(q) for q in wanted)
            twice += two
            nobody += none
            once += not two and not none
        rows.append({"strategy": name, "Go client": go_name, "groups": len(chosen),
                     "every queue held once": once, "a queue held twice": twice,
                     "a queue held by nobody": nobody})
    return rows
