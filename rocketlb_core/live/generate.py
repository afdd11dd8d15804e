"""Random live scenarios from a seed (issue 32): scenarios nobody tuned the model for, in the
format of ``data/scenarios/live/`` (``rocketlb_core.live.record``), small enough that a soak of
many of them is affordable on a loaded machine (events within 40 to 60 s).

``generate_scenario(seed)`` draws, from ``random.Random(seed)`` only (the same seed gives the same
bytes, on every line and machine):

* 1 to 4 brokers of 1 to 8 queues each;
* 1 or 2 producers, each with ``sendLatencyFaultEnable`` on or off (two producers usually differ),
  40 to 100 ms apart, sending from the start until a few seconds after the last event;
* a group ``GID_live`` of 1 to 4 consumers joining over the first 60 % of the run (the first at
  0 s, and it stays), some leaving cleanly or crashing at least 12 s after they joined, and now
  and then one more consumer with another's ``instanceName`` (the duplicate client id trap);
* broker faults on every broker but the last (it holds ``RMQ_SYS_TRACE_TOPIC``; a one-broker
  cluster is only paused): pauses of 2 to 8 s (sometimes two), kills (of a running or a paused
  broker), most followed by a restart 8 to 20 s later, the restart being that broker's last event
  (it takes the longest); faults of different brokers often overlap.

Each target's events make sense in order (``load_scenario`` checks it: no resume of a killed
broker, a restart only after a kill, a leave only after a join). ``line`` only names the line the
scenario is meant for in its header comment: the scenario itself depends on the seed alone, so
both lines can run the same one.

``scenario_seed(soak_seed, i)`` is the seed of a soak's ``i``-th scenario (``bench/live_soak.py``;
the CI test runs scenario 0 of a fresh soak seed, so ``bench/live_soak.py --seed S --scenarios 1``
replays it)."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from rocketlb_core.live.cluster import slave_of
from rocketlb_core.live.jars import LINES
from rocketlb_core.live.record import BROKER_ACTIONS, parse_scenario

DURATION_S = (40, 60)
"""The last event is at most this many seconds after the start (drawn per scenario)."""
GROUP = "GID_live"
TOPIC = "TopicLive"


def scenario_seed(soak_seed: int, index: int) -> int:
    """The seed of scenario ``index`` of a soak seeded ``soak_seed`` (a 48-bit number)."""
    digest = hashlib.sha256(f"rocketlb-live-soak:{soak_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


@dataclass(frozen=True)
class _Event:
    tenths: int                 # at_s * 10
    action: str
    target: str


def _toml_str(text: str) -> str:
    return json.dumps(text)     # ASCII text: a JSON string is a TOML basic string


def _broker_plan(rng: random.Random, name: str, lo: int, hi: int, pause_only: bool,
                 near: int | None) -> list[_Event]:
    """One broker's faults, in tenths of a second within [lo, hi]; ``near`` (a time another
    broker's fault began) makes this one start close to it, so the two overlap."""
    kinds = ["pause"] if pause_only else ["pause", "pause-twice", "kill", "pause-kill",
                                          "pause-resume-kill"]
    kind = rng.choice(kinds)
    if near is not None:
        start = max(lo, min(hi - 200, near + rng.randint(-30, 60)))
    else:
        start = rng.randint(lo, max(lo, hi - 250))
    out: list[_Event] = []
    t = start

    def pause(t: int) -> int:
        out.append(_Event(t, "pause", name))
        t += rng.randint(20, 80)
        out.append(_Event(t, "resume", name))
        return t

    if kind in ("pause", "pause-twice", "pause-resume-kill"):
        t = pause(t)
    if kind == "pause-twice" and t + 150 <= hi:
        t = pause(t + rng.randint(50, 150))
    if kind == "pause-kill":
        out.append(_Event(t, "pause", name))
        t += rng.randint(20, 60)
    if kind in ("kill", "pause-kill", "pause-resume-kill"):
        if kind == "pause-resume-kill":
            t += rng.randint(30, 100)
        out.append(_Event(t, "kill", name))
        if rng.random() < 0.75:
            out.append(_Event(t + rng.randint(80, 200), "restart", name))
    return out


MARK = "# A random live scenario (rocketlb_core.live.generate)"
"""The first line of every generated scenario: ``--out`` replaces only a file that starts so."""


MODE_WEIGHTS = (("sync", 2), ("hash", 1), ("oneway", 1), ("batch", 1))
"""With ``modes``, how often a producer sends each way (issue 45): ``send(msg)``, an ordered
send by key (``SelectMessageQueueByHash`` over 4 to 64 keys), ``sendOneway`` or a batch
(``send(Collection)`` of 2 to 32 messages)."""

ASYNC_SHARE = 0.5
"""With ``modes``, a producer with ``fault_tolerance`` off that sends one message at a time from
one thread (``send(msg)``, after the threads' draw) calls ``send(msg, callback)`` instead this
often (``mode = "async"``: the check of ``trace.async_agreement``), drawn last of all."""

BROADCAST_SHARE = 0.3
"""With ``modes``, how often a scenario also has a broadcasting group ``GID_bc`` of one or two
remoting members (issue 45: ``trace.broadcast_agreement``), each consuming concurrently or
orderly (even odds), the first joining at 0 s and the second within the first 60 % of the run,
both staying to the end; drawn after everything else. Such a scenario restarts every broker it
kills, as a oneway producer's does: the topic's dump, which the check reads for each queue's
store times, reads every broker."""
BROADCAST_GROUP = "GID_bc"

LITE_PULL_SHARE = 0.3
"""With ``modes``, how often one consumer of ``GID_live`` other than the first (and not one
with another's ``instanceName``) is upstream's ``DefaultLitePullConsumer``, subscribing
(``kind = "lite-pull"``: its own rebalance, checked as a push consumer's); drawn after the
broadcasting group."""

GO_SHARE = 0.3
"""With ``modes``, how often one consumer of ``GID_live`` other than the first (not a lite-pull
one, and neither one with another's ``instanceName`` nor one whose name another takes) is the Go
client's push consumer (``language = "go"``, ``live/go``; issue 47): a group mixing the two
clients, each member's assignments checked with its own client's model; drawn last."""

POP_SHARE = 0.3
"""With ``modes`` and a 5.x ``line``, how often a scenario also has a group ``GID_pop`` switched
to POP (``[[consume_modes]]``, ``popShareQueueNum`` -1, 1 or 2) of two or three remoting members
whose queues a broker computes (``rebalance = "broker"``; issue 45: ``trace.pop_agreement``), the
first joining at 0 s and the others within the first 60 % of the run, all staying to the end;
drawn last of all. Such a scenario restarts every broker it kills (the topic's dump, which the
group's count reads, reads every broker)."""
POP_GROUP = "GID_pop"

ORDERLY_SHARE = 0.3
"""With ``modes``, how often a scenario also has an orderly clustering group ``GID_ord`` of one
or two remoting members (``listener = "orderly"``; issue 45: ``trace.lock_agreement`` checks
its brokers' lock lines and who consumed what when), the first joining at 0 s and the second
within the first 60 % of the run, both staying to the end; drawn last of all, from its own
generator (seeded by the scenario's seed), so every line draws it alike. Such a scenario
restarts every broker it kills: what a killed broker stored is the group's to consume."""
ORDERLY_GROUP = "GID_ord"

SLAVE_SHARE = 0.3
"""With ``modes``, how often a broker no event touches (the last one, which holds the trace
topic, when every other has faults) is a ``SYNC_MASTER`` with a slave (``slaves``; issue 45),
and the slave is paused for 5 to 30 s (a 4.x master closes a silent slave's connection after
20 s and answers SLAVE_NOT_AVAILABLE from then on), then half of the time killed and restarted;
one producer sending synchronously from one thread, if there is one, sets
``retry_not_stored``. Drawn last of all, from its own generator (seeded by the scenario's seed),
so every line draws it alike; the slave's master is never faulted (a slave alive beside a
killed master keeps the master's queues in the route with no master: the checks read that
since the ``slave-reads`` recordings, but no soak has drawn it yet), and no
producer of the scenario sends by key or asynchronously (their checks read failures from the
brokers' events, and a 4.x master whose slave is silent times sends out) or from several
threads (a 4.x client names no thread in its failures, and with a slave's statuses beside
them the check left a 4-thread producer's sends unexplained: CI's draw 169386821711581 on
4.9.8, 432 sends, kept in ``.cache/live-gaps``; issue 45, open)."""

BACK_PRESSURE_SHARE = 0.5
PERMIT_CHOICES = (10, 20, 50)
"""With ``modes`` and a 5.x ``line``, how often an async producer takes its sends' permits
(``back_pressure``, one of ``PERMIT_CHOICES``; issue 45: ``enableBackpressureForAsyncMode``,
``trace.async_agreement.permits_held``); drawn from its own generator after every other draw,
so the rest of the scenario is the seed's."""

THREADS_SHARE = 0.4
THREAD_CHOICES = (2, 4, 8)
"""With ``modes``, a producer with ``fault_tolerance`` off that does not send by key is shared
by several application threads ``THREADS_SHARE`` of the time, as many as one of
``THREAD_CHOICES`` (issue 45); each thread sends at the producer's interval, so its count is
that many times larger."""


def _restart_killed(rng: random.Random, events: list[_Event], span: int) -> None:
    """A restart, 8 to 20 s later (within the run), for each killed broker that has none."""
    restarted = {e.target for e in events if e.action == "restart"}
    for e in [e for e in events if e.action == "kill"]:
        if e.target not in restarted:
            events.append(_Event(min(span, e.tenths + rng.randint(80, 200)), "restart",
                                 e.target))
            restarted.add(e.target)


def _join_group(rng: random.Random, events: list[_Event], span: int, prefix: str, least: int,
                most: int) -> list[str]:
    """``least`` to ``most`` members ``<prefix>1``, ... of a group drawn whole: the first joins
    at 0 s, the others within the first 60 % of the run, all stay to the end; every killed
    broker is restarted (what it stored is the group's). Their joins go into ``events``, sorted."""
    names = []
    for k in range(rng.randint(least, most)):
        names.append(f"{prefix}{k + 1}")
        events.append(_Event(0 if k == 0 else rng.randint(0, span * 6 // 10), "join",
                             names[-1]))
    _restart_killed(rng, events, span)
    events.sort(key=lambda e: e.tenths)
    return names


def generate_scenario(seed: int, line: str | None = None, *, modes: bool = False) -> str:
    """A random live scenario's TOML text (see the module docstring), validated by
    ``load_scenario``'s rules before it is returned. With ``modes`` each producer also draws
    how it sends (``MODE_WEIGHTS``), after every other draw, so the rest of the scenario is
    the seed's without it; a scenario with a oneway producer restarts every broker it kills
    (the topic's dump, which says where each oneway message went, reads every broker), and
    has a producer of another mode (the message trace, which the importer reads, records no
    oneway send); then each producer with ``fault_tolerance`` off that does not send by key
    draws its threads (``THREADS_SHARE``), and last, one of them still sending synchronously
    from one thread may send asynchronously (``ASYNC_SHARE``), then a broadcasting group may
    join (``BROADCAST_SHARE``), one consumer may be a lite-pull one (``LITE_PULL_SHARE``),
    one may be the Go client's (``GO_SHARE``), on a 5.x ``line`` a POP group may join
    (``POP_SHARE``), an orderly group may join (``ORDERLY_SHARE``), a broker no event
    touches may have a slave (``SLAVE_SHARE``) and on a 5.x ``line`` an async producer may take
    permits (``BACK_PRESSURE_SHARE``)."""
    if line is not None and line not in LINES:
        raise ValueError(f"line must be one of {', '.join(sorted(LINES))}, not {line!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, not {seed!r}")
    rng = random.Random(seed)
    brokers = rng.randint(1, 4)
    queues = rng.randint(1, 8)
    span = rng.randint(*DURATION_S) * 10                       # tenths of a second
    events: list[_Event] = []

    producers: list[tuple[str, int, bool, int]] = []
    for j in range(rng.randint(1, 2)):
        interval = rng.choice((40, 50, 80, 100))
        ft = rng.random() < 0.5
        if j == 1 and rng.random() < 0.8:
            ft = not producers[0][2]
        count = (span // 10 + 5) * 1000 // interval
        producers.append((f"p{j + 1}-{'on' if ft else 'off'}", interval, ft, count))

    consumers: list[tuple[str, str]] = []                      # name, instance
    for k in range(rng.randint(1, 4)):
        name = f"c{k + 1}"
        consumers.append((name, name))
        join = 0 if k == 0 else rng.randint(0, span * 6 // 10)
        events.append(_Event(join, "join", name))
        if k and join + 120 <= span and rng.random() < 0.5:
            events.append(_Event(rng.randint(join + 120, span), rng.choice(("leave", "crash")),
                                 name))
    if rng.random() < 0.3:
        name, twin = f"c{len(consumers) + 1}", rng.choice(consumers)[1]
        consumers.append((name, twin))
        join = rng.randint(span * 2 // 10, span * 6 // 10)
        events.append(_Event(join, "join", name))
        if rng.random() < 0.5:
            events.append(_Event(rng.randint(join + 120, span), rng.choice(("leave", "crash")),
                                 name))

    broker_names = [f"broker-{c}" for c in "abcd"[:brokers]]
    faultable = broker_names[:-1] if brokers > 1 else broker_names
    chosen = [b for b in faultable if rng.random() < 0.6] or [faultable[0]]
    first: int | None = None
    for b in chosen:
        near = first if first is not None and rng.random() < 0.5 else None
        plan = _broker_plan(rng, b, 30, span, pause_only=brokers == 1, near=near)
        plan = [e for e in plan if e.tenths <= span]
        if plan and plan[-1].action == "pause":     # cut at the end: never leave it paused
            plan.pop()
        events += plan
        if first is None and plan:
            first = plan[0].tenths
    events.sort(key=lambda e: e.tenths)          # stable: one target's ties keep their order

    settle = rng.randint(3, 6)
    kinds: list[tuple[str, int]] = [("sync", 0)] * len(producers)    # (mode, keys or batch)
    if modes:
        names = [m for m, _ in MODE_WEIGHTS]
        weights = [w for _, w in MODE_WEIGHTS]
        kinds = [(m, rng.randint(4, 64) if m == "hash" else rng.randint(2, 32)
                  if m == "batch" else 0)
                 for m in rng.choices(names, weights, k=len(producers))]
        if all(m == "oneway" for m, _ in kinds):
            # the message trace records no oneway send, and the importer needs one Pub
            kinds[0] = ("sync", 0)
        if any(m == "oneway" for m, _ in kinds):
            _restart_killed(rng, events, span)
            events.sort(key=lambda e: e.tenths)
    threads = [1] * len(producers)
    if modes:
        for j, ((_, _, ft, _), (mode, _)) in enumerate(zip(producers, kinds, strict=True)):
            if not ft and mode != "hash" and rng.random() < THREADS_SHARE:
                threads[j] = rng.choice(THREAD_CHOICES)
        for j, (_, _, ft, _) in enumerate(producers):
            if not ft and kinds[j][0] == "sync" and threads[j] == 1 \
                    and rng.random() < ASYNC_SHARE:
                kinds[j] = ("async", 0)
    broadcast: list[tuple[str, bool]] = []                   # name, orderly
    if modes and rng.random() < BROADCAST_SHARE:
        for k in range(rng.randint(1, 2)):
            name = f"bc{k + 1}"
            broadcast.append((name, rng.random() < 0.5))
            events.append(_Event(0 if k == 0 else rng.randint(0, span * 6 // 10), "join",
                                 name))
        _restart_killed(rng, events, span)
        events.sort(key=lambda e: e.tenths)
    lite: set[str] = set()
    own = [n for n, instance in consumers[1:] if n == instance]
    if modes and own and rng.random() < LITE_PULL_SHARE:
        lite.add(rng.choice(own))
    go: set[str] = set()
    twins = {instance for n, instance in consumers if n != instance}
    mixable = [n for n in own if n not in lite and n not in twins]
    if modes and mixable and rng.random() < GO_SHARE:
        go.add(rng.choice(mixable))
    pop: list[str] = []
    pop_share = -1
    if modes and line in ("5", "5.5") and rng.random() < POP_SHARE:
        pop_share = rng.choice((-1, 1, 2))
        pop = _join_group(rng, events, span, "pop", 2, 3)
    ordered: list[str] = []
    # its own draws (a string seed: SHA-512, the same on every run), so that every line draws
    # it alike whatever the lines drew before it
    orng = random.Random(f"orderly-{seed}")
    if modes and orng.random() < ORDERLY_SHARE:
        ordered = _join_group(orng, events, span, "ord", 1, 2)
    slave: str | None = None
    retry: str | None = None
    srng = random.Random(f"slave-{seed}")
    quiet = [b for b in broker_names if b not in {e.target for e in events}]
    # an ordered or async producer's check reads its failures from the brokers' events, which
    # a silent slave's (4.x: its master's sends time out) are not: no slave beside one
    if modes and quiet and srng.random() < SLAVE_SHARE \
            and not any(m in ("hash", "async") for m, _ in kinds) \
            and not any(t > 1 for t in threads):
        slave = srng.choice(quiet)
        target = slave_of(slave)
        pause = srng.randint(10, max(10, span // 2))
        resume = min(span, pause + srng.randint(50, 300))
        events += [_Event(pause, "pause", target), _Event(resume, "resume", target)]
        if srng.random() < 0.5 and resume + 20 < span:
            kill = srng.randint(resume + 10, span - 10)
            events += [_Event(kill, "kill", target),
                       _Event(min(span, kill + srng.randint(80, 200)), "restart", target)]
        events.sort(key=lambda e: e.tenths)
        plain = [n for (n, _, _, _), (mode, _), t in zip(producers, kinds, threads, strict=True)
                 if mode == "sync" and t == 1]
        retry = srng.choice(plain) if plain else None
    permits = [0] * len(producers)
    brng = random.Random(f"back-pressure-{seed}")
    if modes and line in ("5", "5.5"):
        for j, (mode, _) in enumerate(kinds):
            if mode == "async" and brng.random() < BACK_PRESSURE_SHARE:
                permits[j] = brng.choice(PERMIT_CHOICES)
    faults = sorted({e.target for e in events if e.action in BROKER_ACTIONS})
    desc = (f"Generated from seed {seed}: {brokers} broker{'s' * (brokers > 1)} of {queues} "
            f"queue{'s' * (queues > 1)}; producers "
            + ", ".join(f"{n} every {i} ms" for n, i, _, _ in producers)
            + f"; {len(consumers)} consumers of {GROUP}"
            + (f" ({consumers[-1][0]} with {consumers[-1][1]}'s instanceName)"
               if consumers[-1][0] != consumers[-1][1] else "")
            + (f"; {len(broadcast)} broadcasting member{'s' * (len(broadcast) > 1)} of "
               f"{BROADCAST_GROUP} ("
               + ", ".join(f"{n} {'orderly' if o else 'concurrently'}" for n, o in broadcast)
               + ")" if broadcast else "")
            + (f"; {', '.join(sorted(lite))} a lite-pull consumer" if lite else "")
            + (f"; {', '.join(sorted(go))} the Go client's" if go else "")
            + (f"; {len(pop)} members of {POP_GROUP} (POP, popShareQueueNum {pop_share}) "
               "whose queues a broker computes" if pop else "")
            + (f"; {len(ordered)} orderly member{'s' * (len(ordered) > 1)} of "
               f"{ORDERLY_GROUP}" if ordered else "")
            + "".join(f"; {producers[j][0]} with {k} permits" for j, k in enumerate(permits) if k)
            + (f"; {slave} a SYNC_MASTER with a slave"
               + (f", {retry} with retryAnotherBrokerWhenNotStoreOK" if retry else "")
               if slave else "")
            + f"; faults on {', '.join(faults) or 'no broker'}; events within {span / 10:g} s.")
    lines = [f"{MARK}, seed {seed}"
             + (f", for line {line}" if line else "") + ".",
             f"# Regenerate: python -m rocketlb_core.live generate --seed {seed}"
             + (" --modes" if modes else ""),
             f"name = {_toml_str(f'random-{seed}')}",
             f"description = {_toml_str(desc)}",
             f"brokers = {brokers}",
             *([f"slaves = [{_toml_str(slave)}]"] if slave else []),
             f"topic = {_toml_str(TOPIC)}", f"queues = {queues}",
             "trace = true", f"settle_s = {settle}", ""]
    for j, ((n, interval, ft, count), (mode, keys), t) in enumerate(zip(producers, kinds,
                                                                       threads, strict=True)):
        lines += ["[[producers]]", f"name = {_toml_str(n)}",
                  f"group = {_toml_str('PG_' + n.replace('-', '_'))}", f"count = {count * t}",
                  f"interval_ms = {interval}", f"fault_tolerance = {str(ft).lower()}"]
        lines += [f"mode = {_toml_str(mode)}"] if mode != "sync" else []
        lines += [f"keys = {keys}"] if mode == "hash" else []
        lines += [f"batch = {keys}"] if mode == "batch" else []
        lines += [f"threads = {t}"] if t > 1 else []
        lines += ["retry_not_stored = true"] if n == retry else []
        lines += [f"back_pressure = {permits[j]}"] if permits[j] else []
        lines += [""]
    for n, instance in consumers:
        lines += ["[[consumers]]", f"name = {_toml_str(n)}", f"group = {_toml_str(GROUP)}",
                  f"instance = {_toml_str(instance)}"]
        lines += ['kind = "lite-pull"'] if n in lite else []
        lines += ['language = "go"'] if n in go else []
        lines += [""]
    for n, orderly in broadcast:
        lines += ["[[consumers]]", f"name = {_toml_str(n)}",
                  f"group = {_toml_str(BROADCAST_GROUP)}", 'model = "broadcasting"']
        lines += ['listener = "orderly"'] if orderly else []
        lines += [""]
    for n in pop:
        lines += ["[[consumers]]", f"name = {_toml_str(n)}", f"group = {_toml_str(POP_GROUP)}",
                  'rebalance = "broker"', ""]
    for n in ordered:
        lines += ["[[consumers]]", f"name = {_toml_str(n)}",
                  f"group = {_toml_str(ORDERLY_GROUP)}", 'listener = "orderly"', ""]
    if pop:
        lines += ["[[consume_modes]]", f"group = {_toml_str(POP_GROUP)}", 'mode = "POP"',
                  f"pop_share = {pop_share}", ""]
    for e in events:
        lines += ["[[events]]", f"at_s = {e.tenths // 10}.{e.tenths % 10}",
                  f"action = {_toml_str(e.action)}", f"target = {_toml_str(e.target)}", ""]
    text = "\n".join(lines)
    parse_scenario(text, f"<generated from seed {seed}>")       # a generator bug fails here
    return text
