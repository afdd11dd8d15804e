"""The simulator's producer with its sends compiled: ``CompiledProducer`` sends exactly what the
core ``Producer`` sends (the same queues, latencies, fault reports, retries and counter steps,
from the same seeded streams), about 10 times faster on a long run (issue 15, part 3;
``bench/simulation.py``).

While the world is healthy for a producer (every broker of its route up, none paused, none cut
off from it; the route's queues writable), a tick's sends run in ``run_sends``: the sync send
loop of ``producer.send`` (spec 2.6) with the selection of 4.9.7 and 4.9.8 (spec 2.4a: one counter
step, then a local walk to the first available broker with the fault strategy on; the plain pick
and the walk avoiding the last broker with it off), each attempt's latency drawn as
``Broker.latency_ms(rng.gauss(0.0, 1.0))`` from the producer's own ``random.Random`` (``mt``), a
latency at or above the budget left a timeout (``TIMER_OVERSHOOT_MS``), reported with isolation
(spec 2.3: ``FaultTable4.update``). The loop keeps the producer's state in arrays between ticks:
the random stream, the counter, the fault table (``fi``: one row per broker, with the order items
entered the table). ``settle()`` writes it back before anything else reads it (a route poll, which
draws from the same stream; a send the loop hands back; the end of the run). What the sends
stored is counted per queue of the world (``Pending``) and brought into the brokers' stores and
the ledger when something reads them (``Services.settle_stores``).

The loop hands a send back (``BAIL``, with every draw and report of it undone) when it finds
every broker isolated (the least-bad pick) or a latency the core would reject (not finite); the
core's ``send()`` then sends it. Anything else the loop does not model (a broker down, paused or
cut off; 4.7.1 and 5.x; the first send, which draws the counter's start) runs through the core
``Producer`` as before. ``tests/test_simfast.py`` holds journals, ledgers and summaries to the
core's, byte for byte, on every scenario and on generated worlds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from rocketlb_core.conditions import lognormal_sigma
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.fault import FaultItem, FaultTable4
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.send import TIMER_OVERSHOOT_MS, SendConfig
from rocketlb_core.sim.clients import Producer
from rocketlb_core.sim.ledger import FAILED, Ledger, QueueAccount
from rocketlb_core.simfast.mt import AVAILABLE, N, State, gauss, njit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rocketlb_core.sim.cluster import Broker
    from rocketlb_core.sim.kernel import Environment
    from rocketlb_core.sim.scenario import ProducerSpec
    from rocketlb_core.sim.services import Services

__all__ = ["AVAILABLE", "CompiledProducer", "producer_class", "run_sends"]

INT_MAX = 0x7FFFFFFF
INT_MIN = -0x80000000
BATCH = 4096                     # sends a call may take before it returns for accounting

# Why ``run_sends`` returned.
DONE = 0                         # nothing more is due before now (or the thread is busy)
FULL = 1                         # ``out`` is full: account for it and call again
BAIL = 2                         # the next send is the core's (nothing of it was kept)

# ``ps``: the producer's scalars (the last three: what a call stored, for its accounting);
# ``fi``: one row per broker, the fault item as the table holds it.
SENT, BUSY, COUNTER, NEXT_SEQ, N_STORED, N_QUEUES, N_BROKERS, RETRIES = 0, 1, 2, 3, 4, 5, 6, 7
PRESENT, LAT, UNTIL, SEQ = 0, 1, 2, 3
# ``out``: one row per send.
DUE, POS, ATTEMPTS, SEND_MS, ERR = 0, 1, 2, 3, 4
ERRORS = (None, "RemotingException", "call timeout")


@njit(cache=True, nogil=True)
def _next(ps: np.ndarray) -> int:
    """``ThreadLocalIndex.next()`` on 4.9.x: step the stored value (32-bit), return it masked."""
    v = ps[COUNTER]
    v = INT_MIN if v == INT_MAX else v + 1
    ps[COUNTER] = v
    return v & INT_MAX


@njit(cache=True, nogil=True)
def _position(k: int, n: int) -> int:
    """The queue a walk's value ``k`` names (``MQFaultStrategy.select``'s local walk)."""
    if k >= 0:
        return k % n
    if k == INT_MIN:                   # jabs(MIN) stays negative: clamped to 0
        return 0
    return (-k) % n


@njit(cache=True, nogil=True)
def _duration(latency: int, lat_max: np.ndarray, nad: np.ndarray) -> int:
    """``computeNotAvailableDuration`` (spec 2.3)."""
    for i in range(lat_max.shape[0] - 1, -1, -1):
        if latency >= lat_max[i]:
            return int(nad[i])
    return 0


@njit(cache=True, nogil=True)
def _round(x: float) -> int:
    """Python's ``round(x)`` for a finite ``0 <= x < 2**52``: to nearest, ties to even."""
    r = math.floor(x)
    d = x - r
    if d > 0.5 or (d == 0.5 and r % 2 == 1):
        r += 1
    return int(r)


@njit(cache=True, nogil=True)
def run_sends(now: int, start_ms: int, end_ms: int, interval: float, ps: np.ndarray,
              qb: np.ndarray, conf: np.ndarray, lat_max: np.ndarray, nad: np.ndarray,
              bf: np.ndarray, fi: np.ndarray, saved: np.ndarray, mt: np.ndarray,
              rs: np.ndarray, gn: np.ndarray, backup: np.ndarray, out: np.ndarray,
              gslot: np.ndarray, count: np.ndarray, known: np.ndarray, fresh: np.ndarray,
              bcount: np.ndarray, bseen: np.ndarray, stored_ms: np.ndarray) -> tuple[int, int]:
    """Send every message due before ``now``, as ``Producer.tick`` does. Returns (rows of
    ``out`` written, why it stopped). ``qb``: the broker row of each queue of the route, in the
    route's order; ``conf``: (fault strategy on, send timeout, attempts, isolation latency);
    ``bf``: (median, sigma) per broker row; ``saved``: one row per attempt (a fault item's
    broker row and its values before the attempt's report). What was stored is also added up
    for the caller's accounting. With ``conf[4]`` (deferred counting, ``Pending``): per queue
    of the world into ``count`` (``gslot``: each route queue's slot there), the slots never
    stored to before (``known``) listed in ``fresh`` in the order first stored to
    (``ps[N_QUEUES]`` of them); always: per broker row in the order first stored to
    (``bseen[:k]``, their counts ``bseen[nb:nb + k]``, ``k = ps[N_BROKERS]``; ``bcount`` is the
    loop's scratch, zero between calls), each stored send's time in order (``stored_ms``:
    ``ps[N_STORED]`` of them), and the retries (``ps[RETRIES]``: attempts beyond the first)."""
    n = qb.shape[0]
    fault_on, timeout, attempts, isolation, deferred = conf[0], conf[1], conf[2], conf[3], conf[4]
    i, has, nxt = rs[0], rs[1] != 0, gn[0]     # the random stream's scalars, kept here
    m, why = 0, DONE
    while True:
        sent, busy = ps[SENT], ps[BUSY]
        due = start_ms + int(sent * interval)
        if due >= end_ms or due >= now or busy >= now:
            break
        if m >= out.shape[0]:
            why = FULL
            break
        # what to put back if the send is handed to the core
        s_i, s_has, s_nxt, s_cnt, s_seq = i, has, nxt, ps[COUNTER], ps[NEXT_SEQ]
        backed = i > N - 4 * attempts          # the send may regenerate the words
        if backed:
            backup[:] = mt
        undo = 0                               # rows of ``saved``: fault items as they were
        clock = due if due > busy else busy
        first = clock
        last, pos, natt, err, bail = -1, -1, 0, 1, False
        for _ in range(attempts):
            # MQFaultStrategy.select (4.9.x)
            p = -1
            if fault_on:
                k = _next(ps)
                for _ in range(n):
                    q = _position(k, n)
                    b = qb[q]
                    if fi[b, PRESENT] == 0 or clock - fi[b, UNTIL] >= 0:
                        p = q
                        break
                    k = INT_MIN if k == INT_MAX else k + 1
                if p < 0:                      # every broker isolated: the least-bad pick
                    bail = True
                    break
            elif last < 0:
                p = _next(ps) % n
            else:
                for _ in range(n):
                    q = _next(ps) % n
                    if qb[q] != last:
                        p = q
                        break
                if p < 0:
                    p = _next(ps) % n
            b = qb[p]
            begin = clock
            if timeout < begin - first:
                err = 2                        # call timeout
                break
            budget = timeout - (begin - first)
            z, i, has, nxt = gauss(mt, i, has, nxt)
            x = bf[b, 0] * math.exp(bf[b, 1] * z)
            if not (x >= 0.0 and x < 1e300):   # NaN or infinite: the core raises; let it
                bail = True
                break
            lat = budget
            if x < 4.0e15:
                lat = _round(x)
                if lat < 1:
                    lat = 1
            timed_out = lat >= budget
            if timed_out:
                lat = budget + TIMER_OVERSHOOT_MS
            natt += 1
            if fault_on:                       # updateFaultItem (FaultTable4.update)
                saved[undo, 0] = b
                saved[undo, 1:] = fi[b]
                undo += 1
                d = _duration(isolation if timed_out else lat, lat_max, nad)
                if fi[b, PRESENT] == 0:
                    fi[b, PRESENT] = 1
                    fi[b, SEQ] = ps[NEXT_SEQ]
                    ps[NEXT_SEQ] += 1
                fi[b, LAT] = lat
                fi[b, UNTIL] = begin + lat + d
            clock = begin + lat
            last = b
            if not timed_out:
                pos = p
                break
            err = 1                            # RemotingException
        if bail:
            i, has, nxt = s_i, s_has, s_nxt
            if backed:
                mt[:] = backup
            ps[COUNTER], ps[NEXT_SEQ] = s_cnt, s_seq
            for u in range(undo - 1, -1, -1):
                fi[saved[u, 0]] = saved[u, 1:]
            why = BAIL
            break
        ps[SENT], ps[BUSY] = sent + 1, clock
        if natt > 1:
            ps[RETRIES] += natt - 1
        if pos >= 0:
            if deferred:
                g = gslot[pos]
                if known[g] == 0:
                    known[g] = 1
                    fresh[ps[N_QUEUES]] = g
                    ps[N_QUEUES] += 1
                count[g] += 1
            b = qb[pos]
            if bcount[b] == 0:
                bseen[ps[N_BROKERS]] = b
                ps[N_BROKERS] += 1
            bcount[b] += 1
            stored_ms[ps[N_STORED]] = clock - due
            ps[N_STORED] += 1
        out[m, DUE], out[m, POS], out[m, ATTEMPTS] = due, pos, natt
        out[m, SEND_MS], out[m, ERR] = clock - due, 0 if pos >= 0 else err
        m += 1
    rs[0], rs[1], gn[0] = i, has, nxt
    for k in range(ps[N_BROKERS]):             # the counts in first-stored order, zeroed
        b = bseen[k]
        bseen[bcount.shape[0] + k] = bcount[b]
        bcount[b] = 0
    return m, why


def eligible(line_rules: Any, fault_on: bool, lat_max: tuple[int, ...],
             nad: tuple[int, ...]) -> bool:
    """Whether ``run_sends`` models this line: 4.9.7 and 4.9.8 (the 4.x selection without the
    4.7.1 counter, walk and last-broker rule), with duration tables upstream can index."""
    return (AVAILABLE and line_rules.selection == "4.x" and not line_rules.counter_clamps
            and not line_rules.retry_walks_locally
            and not (fault_on and line_rules.fault_scan_wants_last_broker)
            and len(nad) >= len(lat_max))


class Pending:
    """Messages the compiled sends stored, counted per queue of the world (``count``) and
    brought into the brokers' stores and the ledger's accounts when something is about to read
    them (``settle``: a pull settles the queues it reads, a lag sample and a send through the
    core every queue): a queue takes ten messages a second from twenty producers, so this
    adds up what a per-tick count would add one producer at a time (``Services.settle_stores``).

    A queue's first stored message opens its account and its store entry at once (``open``), in
    the order the sends met them, so the ledger's and the brokers' tables hold their queues in
    the order the core's sends would have added them.
    """

    def __init__(self, world: Services) -> None:
        self.slots: dict[MessageQueue, int] = {}
        self.queues: list[MessageQueue] = []
        self.brokers: list[Broker] = []
        for b in world.brokers.values():
            for topic, qd in b.topics.items():
                for q in range(max(qd.read_queue_nums, qd.write_queue_nums)):
                    mq = MessageQueue(topic, b.name, q)
                    self.slots[mq] = len(self.queues)
                    self.queues.append(mq)
                    self.brokers.append(b)
        self.count = np.zeros(len(self.queues), np.int64)
        self.known = np.zeros(len(self.queues), np.int64)
        self.accts: list[QueueAccount | None] = [None] * len(self.queues)
        self._lists: dict[int, tuple[Sequence[MessageQueue], np.ndarray]] = {}

    def open(self, ledger: Ledger, slots: list[int]) -> None:
        """Open the account and the store entry of each of ``slots`` (first stored to)."""
        for g in slots:
            if self.accts[g] is None:
                mq = self.queues[g]
                acct = ledger.queues.get(mq)
                if acct is None:
                    acct = ledger.queues[mq] = QueueAccount()
                self.accts[g] = acct
                self.brokers[g].append(mq.topic, mq.queue_id, 0)

    def _slots_of(self, queues: Sequence[MessageQueue]) -> np.ndarray:
        """The slots of ``queues``, kept per list (a consumer asks with one list per table)."""
        got = self._lists.get(id(queues))
        if got is None or got[0] is not queues:
            if len(self._lists) > 4096:
                self._lists.clear()
            got = self._lists[id(queues)] = (queues, np.array(
                [self.slots[q] for q in queues if q in self.slots], np.int64))
        return got[1]

    def settle(self, queues: Sequence[MessageQueue] | None) -> None:
        count = self.count
        if queues is None:
            nz = np.flatnonzero(count)
        elif len(queues) == 1:
            g = self.slots.get(queues[0], -1)
            nz = np.array([g] if g >= 0 and count[g] else [], np.int64)
        else:
            slots = self._slots_of(queues)
            nz = slots[count[slots] != 0]
        if not nz.size:
            return
        accts, queues, brokers = self.accts, self.queues, self.brokers
        for g, c in zip(nz.tolist(), count[nz].tolist(), strict=True):
            acct = accts[g]
            assert acct is not None
            acct.stored += c
            mq = queues[g]
            brokers[g].append(mq.topic, mq.queue_id, c)
        count[nz] = 0


class CompiledProducer(Producer):
    """A ``Producer`` whose healthy ticks run in ``run_sends`` (see the module docstring)."""

    def __init__(self, spec: ProducerSpec, world: Services, env: Environment) -> None:
        super().__init__(spec, world, env)
        s = self.strategy
        config = SendConfig()
        self._eligible = eligible(world.line.rules, s.send_latency_fault_enable,
                                  s.latency_max, s.not_available_duration)
        if world.deferred is None:
            world.deferred = Pending(world)
        assert isinstance(world.deferred, Pending)
        self._pending = world.deferred
        self._conf = np.array([s.send_latency_fault_enable, config.send_msg_timeout_ms,
                               1 + config.retry_times_when_send_failed, s.isolation_latency,
                               world.ledger.sink is None], np.int64)
        self._lat_max = np.array(s.latency_max, np.int64)
        self._nad = np.array(s.not_available_duration, np.int64)
        self._st = State()
        self._ps = np.zeros(8, np.int64)
        self._out = np.zeros((BATCH, 5), np.int64)
        self._stored_ms = np.zeros(BATCH, np.int64)
        self._saved = np.zeros((int(self._conf[2]), 5), np.int64)   # one row per attempt
        self._live = False             # the arrays, not the objects, hold the counter and table
        self._rng_live = False         # ... and the random stream
        self._bad_tp: object = None    # a route whose queues the loop cannot send to
        self._seen = -1                # the world's ``changes`` the health and latencies are of
        self._fit = False              # healthy then

    # ------------------------------------------------------------------ state in and out
    def _take(self) -> bool:
        """Copy the state into the arrays; ``False`` when the loop cannot send on it."""
        tp, table = self.tp, self.strategy.table
        if tp is None or not tp.ok() or tp.index.stored is None or tp is self._bad_tp:
            return False
        assert isinstance(table, FaultTable4)
        brokers = self.world.brokers
        names = list(table.items)
        row = {name: i for i, name in enumerate(names)}
        for q in tp.queues:
            qd = brokers[q.broker_name].topics.get(q.topic) if q.broker_name in brokers else None
            if qd is None or not qd.writable or q.queue_id >= qd.write_queue_nums:
                self._bad_tp = tp
                return False
            if q.broker_name not in row:
                row[q.broker_name] = len(names)
                names.append(q.broker_name)
        self._names = names
        self._route_brokers = sorted({q.broker_name for q in tp.queues})
        self._queues: list[MessageQueue] = list(tp.queues)
        self._qb = np.array([row[q.broker_name] for q in tp.queues], np.int64)
        self._gslot = np.array([self._pending.slots[q] for q in tp.queues], np.int64)
        self._fresh = np.zeros(len(tp.queues), np.int64)
        self._bcount = np.zeros(len(names), np.int64)
        self._bseen = np.zeros(2 * len(names), np.int64)
        fi = self._fi = np.zeros((len(names), 4), np.int64)
        for i, item in enumerate(table.items.values()):
            fi[i] = (1, item.current_latency, item.start_timestamp, i)
        self._bf = np.zeros((len(names), 2), np.float64)
        ps = self._ps
        ps[COUNTER], ps[NEXT_SEQ] = tp.index.stored, len(table.items)
        self._st.take(self.rng)
        self._live = self._rng_live = True
        self._seen = -1
        return True

    def settle(self) -> None:
        """Write the arrays back into the random stream, the counter and the fault table."""
        if self._rng_live:
            self._st.give(self.rng)
            self._rng_live = False
        if self._live:
            assert self.tp is not None
            self._give_tables(self.tp)

    def _give_tables(self, tp: TopicPublishInfo) -> None:
        """Write the counter (into ``tp``, the route the arrays were taken from) and the fault
        table back."""
        self._live = False
        tp.index.stored = int(self._ps[COUNTER])
        table = self.strategy.table
        old = table.items
        rows = sorted((int(r[SEQ]), i) for i, r in enumerate(self._fi.tolist()) if r[PRESENT])
        items: dict[str, FaultItem] = {}
        for _, i in rows:
            name, lat, until = self._names[i], int(self._fi[i, LAT]), int(self._fi[i, UNTIL])
            item = old.get(name)
            if item is None:
                item = FaultItem(name, lat, until)
            item.current_latency, item.start_timestamp = lat, until
            items[name] = item
        table.items = items

    def poll_route(self, env: Environment) -> None:
        """The core's poll, which draws from the producer's stream: the stream is written
        back first (and taken again at the next tick); the counter and the fault table only
        when the poll brings a new route (a new counter)."""
        if self._rng_live:
            self._st.give(self.rng)
            self._rng_live = False
        before = self.tp
        super().poll_route(env)
        if self._live and self.tp is not before:
            assert before is not None
            self._give_tables(before)

    # ------------------------------------------------------------------ sending
    def _healthy(self) -> bool:
        """Every broker of the route up, not paused, and reachable from this producer (asked
        again only when a scripted event has changed the world: ``Services.changes``)."""
        net = self.world.network
        if not net.down and not net.partitions:
            return True
        return all(b not in net.down and (self.name, b) not in net.partitions
                   for b in self._route_brokers)

    def _refresh_latencies(self) -> None:
        """Each broker row's latency model (median, sigma), as ``Broker.latency_ms`` uses it."""
        brokers = self.world.brokers
        for i, n in enumerate(self._names):
            if n in brokers:
                b = brokers[n]
                self._bf[i] = b.median_ms, lognormal_sigma(b.median_ms, b.p99_ms)

    def tick(self, env: Environment) -> None:
        if not self._eligible:
            super().tick(env)
            return
        if self.tp is None:
            self.poll_route(env)       # tryToFindTopicPublishInfo asks at once
        end, ledger = self.stop_ms, self.world.ledger
        while True:
            if not self._live and not self._take():
                due = self.due_at(self.sent)   # the first send draws the counter's start
                if due >= end or due >= env.now or self.busy_until >= env.now:
                    return
                self.send_one(due, ledger)
                continue
            if self._seen != self.world.changes:
                self._seen = self.world.changes
                self._fit = self._healthy()
                self._refresh_latencies()
            if not self._fit:
                self.settle()
                super().tick(env)
                return
            ps, st = self._ps, self._st
            if not self._rng_live:     # a route poll drew from the stream since
                st.take(self.rng)
                self._rng_live = True
            ps[SENT], ps[BUSY] = self.sent, self.busy_until
            ps[N_STORED] = ps[N_QUEUES] = ps[N_BROKERS] = ps[RETRIES] = 0
            m, why = run_sends(env.now, self.spec.start_ms, end, self.interval, ps, self._qb,
                               self._conf, self._lat_max, self._nad, self._bf, self._fi,
                               self._saved, st.mt, st.rs, st.gn, st.backup, self._out,
                               self._gslot, self._pending.count, self._pending.known,
                               self._fresh, self._bcount, self._bseen,
                               self._stored_ms)
            self.sent, self.busy_until = int(ps[SENT]), int(ps[BUSY])
            if m:
                self._count(ledger, m)
            if why == DONE:
                return
            if why == BAIL:
                self.settle()
                self.send_one(self.due_at(self.sent), ledger)

    def _count(self, ledger: Ledger, m: int) -> None:
        """Account for ``m`` sends of ``out``: as ``send_one`` would, message by message, or
        (no sink) added up per queue and broker, with the same counts and the same orders
        (queues and brokers first stored to enter the ledger's tables in that order)."""
        ps, out = self._ps, self._out[:m]
        stored, nb, kb = int(ps[N_STORED]), len(self._names), int(ps[N_BROKERS])
        if ledger.sink is not None:
            self._one_by_one(ledger, out)
            return
        if ps[N_QUEUES]:                       # queues stored to for the first time
            self._pending.open(ledger, self._fresh[:ps[N_QUEUES]].tolist())
        by_broker, bseen, names = ledger.stored_by_broker, self._bseen, self._names
        for b, c in zip(bseen[:kb].tolist(), bseen[nb:nb + kb].tolist(), strict=True):
            by_broker[names[b]] += c
        ledger.sent += m
        ledger.stored += stored
        ledger.retries += int(ps[RETRIES])
        if stored < m:
            failed = out[out[:, POS] < 0]
            ledger.failed += m - stored
            for e in failed[:, ERR].tolist():
                ledger.errors[ERRORS[e] or "?"] += 1
        ledger.send_ms.update(self._stored_ms[:stored].tolist())

    def _one_by_one(self, ledger: Ledger, out: np.ndarray) -> None:
        queues, name, brokers = self._queues, self.name, self.world.brokers
        for due, p, attempts, send_ms, err in out.tolist():
            if p >= 0:
                mq = queues[p]
                offset = brokers[mq.broker_name].append(mq.topic, mq.queue_id)
                ledger.record_send(name, due, "SEND_OK", mq, offset, attempts, send_ms, None)
            else:
                ledger.record_send(name, due, FAILED, None, -1, attempts, send_ms,
                                   ERRORS[err])


def producer_class() -> type[Producer]:
    """``CompiledProducer`` when numba is installed, else the core ``Producer``."""
    return CompiledProducer if AVAILABLE else Producer
