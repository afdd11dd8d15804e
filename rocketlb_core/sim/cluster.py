"""Name servers, brokers and the network between them and the clients (spec 5, 7, 8).

Brokers keep topics, stored messages (per queue, its next offset), the consumer table keyed by
channel (one per client process: two processes with one client id appear twice), committed
offsets, and send ``NOTIFY_CONSUMER_IDS_CHANGED`` when a channel joins or leaves cleanly. A client
that goes quiet (its host vanished, or a partition cut it) is dropped by whichever comes first:
the **idle close** (Netty's ``IdleStateHandler(0, 0, 120)``: 120 s after the channel's last
traffic either way, its last request or the broker's last answer, notifying the group) or the
**scan** (every 10 s, channels whose last heartbeat is over 120 s old, without notifying; issue
45, spec 3.4). A broker holds a quiet client's pulls until a message arrives on their queue or
for 15 s, and its answers are traffic. Name servers take registrations every 30 s and drop a
silent broker by their own idle close, 120 s after its last registration (their 10 s scan comes
no sooner), or at once when its connection resets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketlb_core.conditions import (
    BROKER_EXPIRY_MS,
    CHANNEL_EXPIRY_MS,
    CHANNEL_SCAN_MS,
    HOLD_CHECK_MS,
    IDLE_CLOSE_MS,
    PULL_SUSPEND_MS,
    REGISTER_PERIOD_MS,
    latency_ms,
)
from rocketlb_core.model import BrokerData, MessageQueue, QueueData, TopicRoute
from rocketlb_core.sim.events import (
    PULL_TICK_MS,
    BrokerIdle,
    BrokerRegister,
    BrokerScan,
    ChannelScan,
    HeldPulls,
    IdleCheck,
    Notify,
)
from rocketlb_core.sim.kernel import Environment, Event

if TYPE_CHECKING:
    from rocketlb_core.sim.services import Services



class Network:
    """Who can reach whom: broker liveness, crash mode and client-broker partitions."""

    def __init__(self) -> None:
        self.down: dict[str, str] = {}                     # broker -> "clean" | "silent" | "paused"
        self.partitions: set[tuple[str, str]] = set()      # (client, broker)
        self.paused_until: dict[str, int] = {}             # a paused broker answers then
        # what clients sent a paused broker: it reads them at the resume, in order (heartbeats,
        # unregisters, closed connections); meanwhile it holds its old view of every group
        self.pending: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def reachable(self, client: str, broker: str) -> bool:
        return broker not in self.down and (client, broker) not in self.partitions

    def waits(self, client: str, broker: str) -> bool:
        """The broker is paused (SIGSTOP) and the client reaches it: what it sends waits in
        the broker's socket (``pending``) and is read at the resume."""
        return broker in self.paused_until and (client, broker) not in self.partitions

    def failure_is_fast(self, client: str, broker: str) -> bool:
        """A reset connection fails at once; a vanished host or a partition times out."""
        return self.down.get(broker) == "clean" and (client, broker) not in self.partitions


@dataclass
class Channel:
    client_id: str
    last_update_ms: int          # its last heartbeat (what the scan reads)
    last_write_ms: int = 0       # the broker's last write on it: an answer, a notification


@dataclass
class Broker:
    name: str
    room: str
    address: str
    median_ms: float
    p99_ms: float
    topics: dict[str, QueueData] = field(default_factory=dict)
    store: dict[tuple[str, int], int] = field(default_factory=dict)   # -> messages (next offset)
    consumers: dict[str, dict[str, Channel]] = field(default_factory=dict)  # group -> channels
    offsets: dict[tuple[str, str, int], int] = field(default_factory=dict)  # (group, topic, q)
    alive: bool = True

    def latency_ms(self, rng_value: float) -> int:
        """A send latency drawn from a log-normal with the broker's median and p99."""
        return latency_ms(self.median_ms, self.p99_ms, rng_value)

    def append(self, topic: str, queue_id: int, count: int = 1) -> int:
        """Store ``count`` messages on the queue: the first one's offset (a queue is a log;
        the ledger, not the broker, accounts for what each offset holds). ``count`` 0 opens the
        queue's entry without storing."""
        offset = self.store.get((topic, queue_id), 0)
        self.store[(topic, queue_id)] = offset + count
        return offset

    def max_offset(self, topic: str, queue_id: int) -> int:
        return self.store.get((topic, queue_id), 0)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """``QUERY_CONSUMER_OFFSET``: the committed offset, or -1 ("not found"). For a group
        with no commit on a queue that was never truncated and whose first message is still in
        memory, the broker answers 0 instead (spec 4.3): the simulated store keeps every
        message in memory, so a young topic's history is consumed by a brand-new group."""
        committed = self.offsets.get((group, topic, queue_id))
        if committed is not None:
            return committed
        return 0

    def consumer_ids(self, group: str) -> list[str]:
        """``getConsumerIdListByGroup``: one id per channel, in registration order."""
        return [ch.client_id for ch in self.consumers.get(group, {}).values()]


class BrokerEntity:
    """The broker's timers and its side of heartbeats, unregistration and notification."""

    def __init__(self, broker: Broker, world: Services) -> None:
        self.b = broker
        self.world = world
        # pulls held for quiet clients: channel -> (since, queue -> the offset asked for)
        self.held: dict[str, tuple[int, dict[MessageQueue, int]]] = {}
        self.started_ms = 0          # the process's start: the hold service's 5 s passes

    def start(self, env: Environment, keep_consumers: bool = False) -> None:
        self.b.alive = True
        if not keep_consumers:
            self.b.consumers.clear()             # the consumer table lives in memory
            self.started_ms = env.now            # a new process (a resume keeps its threads)
        self.world.register_broker(env, self.b)
        env.schedule(REGISTER_PERIOD_MS, BrokerRegister(self.b.name))
        env.schedule(CHANNEL_SCAN_MS, ChannelScan(self.b.name))

    def handle(self, env: Environment, event: Event) -> None:
        if not self.b.alive:
            until = self.world.network.paused_until.get(self.b.name)
            if until is not None and isinstance(event, (IdleCheck, HeldPulls)):
                env.schedule_at(until, event)      # a paused process runs them at the resume
            return
        if isinstance(event, BrokerRegister):
            self.world.register_broker(env, self.b)
            env.schedule(REGISTER_PERIOD_MS, BrokerRegister(self.b.name))
        elif isinstance(event, ChannelScan):
            for group, channels in self.b.consumers.items():
                for ch_name in [n for n, ch in channels.items()
                                if env.now - ch.last_update_ms > CHANNEL_EXPIRY_MS]:
                    del channels[ch_name]
                    env.log("channel_expired", self.b.name, group=group, channel=ch_name,
                            by="scan")
            env.schedule(CHANNEL_SCAN_MS, ChannelScan(self.b.name))
        elif isinstance(event, HeldPulls):
            if event.channel in self.held:
                self.answer_held(env, event.channel)
        elif isinstance(event, IdleCheck):
            self.idle_check(env, event)

    def went_quiet(self, env: Environment, group: str, channel: str, last_ms: int,
                   pulls: dict[MessageQueue, int]) -> None:
        """A client sent its last request here at ``last_ms`` (its host vanished, or a
        partition cut it), while this broker held its ``pulls`` (queue -> the offset each
        asked for): answer them as they come due and close the channel when idle."""
        if channel not in self.b.consumers.get(group, {}):
            return
        if pulls:
            self.held[channel] = (env.now, dict(pulls))
            self.answer_held(env, channel)
        env.schedule_at(last_ms + IDLE_CLOSE_MS, IdleCheck(self.b.name, group, channel))

    def answer_held(self, env: Environment, channel: str) -> None:
        """Answer the held pulls whose queue has a new message (long polling; checked every
        pull tick), and all of them at the hold service's first 5 s pass after the suspend
        timeout (15 to 20 s after they were held): each answer is a write. The pulls are taken
        as held from the moment the client went quiet (upstream's last one on a quiet queue
        may have been held up to 20 s before; not modelled)."""
        since, pulls = self.held[channel]
        self.world.settle_stores(list(pulls))
        due = since + PULL_SUSPEND_MS
        passes = -(-(due - self.started_ms) // HOLD_CHECK_MS)       # ceiling
        timeout_at = self.started_ms + max(0, passes) * HOLD_CHECK_MS
        timeout = env.now >= timeout_at
        answered = [mq for mq, asked in pulls.items()
                    if timeout or self.b.max_offset(mq.topic, mq.queue_id) > asked]
        for mq in answered:
            del pulls[mq]
        if answered:
            self.wrote(channel, env.now)
        if pulls:
            env.schedule(min(PULL_TICK_MS, timeout_at - env.now),
                         HeldPulls(self.b.name, channel))
        else:
            del self.held[channel]

    def wrote(self, channel: str, at_ms: int) -> None:
        """The broker wrote on ``channel`` (a write counts as traffic for the idle close)."""
        for channels in self.b.consumers.values():
            ch = channels.get(channel)
            if ch is not None:
                ch.last_write_ms = max(ch.last_write_ms, at_ms)

    def idle_check(self, env: Environment, e: IdleCheck) -> None:
        """``IdleStateHandler`` (``ALL_IDLE``, 120 s) for a quiet client's channel: closed,
        and the group notified (``onChannelIdle`` -> ``doChannelCloseEvent``), once neither
        side has written for 120 s; a channel the scan dropped first is gone already."""
        ch = self.b.consumers.get(e.group, {}).get(e.channel)
        if ch is None:
            return
        last = self.world.last_request(e.channel, self.b.name)
        if last is None:
            return                                  # it talks to this broker again
        idle_at = max(last, ch.last_update_ms, ch.last_write_ms) + IDLE_CLOSE_MS
        if idle_at > env.now:
            env.schedule_at(idle_at, e)
            return
        del self.b.consumers[e.group][e.channel]
        self.held.pop(e.channel, None)
        env.log("channel_expired", self.b.name, group=e.group, channel=e.channel,
                by="idle close")
        self.notify(env, e.group)

    def resume(self, env: Environment) -> None:
        """SIGCONT after a pause: the process kept its memory, so its consumer table is the
        view it held when paused (issue 32: a consumer that left meanwhile is still in it);
        it then reads what the clients sent meanwhile, in order (here in one step; live in a
        burst of a few milliseconds whose intermediate lists a consumer may be answered, see
        ``trace.agreement.BrokerViews``). Consumers ask one broker of the route at random
        (``findConsumerIdList``), this one included."""
        self.start(env, keep_consumers=True)
        for kind, args in self.world.network.pending.pop(self.b.name, []):
            if kind == "heartbeat":
                self.heartbeat(env, *args)
            elif kind == "unregister":
                self.unregister(env, *args)
            else:
                self.channel_closed(env, *args)

    def heartbeat(self, env: Environment, group: str, channel: str, client_id: str) -> None:
        channels = self.b.consumers.setdefault(group, {})
        known = channels.get(channel)
        channels[channel] = Channel(client_id, env.now, env.now)
        if known is None:
            env.log("consumer_registered", self.b.name, group=group, channel=channel,
                    client_id=client_id)
            self.notify(env, group)

    def unregister(self, env: Environment, group: str, channel: str) -> None:
        if self.b.consumers.get(group, {}).pop(channel, None) is not None:
            env.log("consumer_unregistered", self.b.name, group=group, channel=channel)
            self.notify(env, group)

    def channel_closed(self, env: Environment, group: str, channel: str) -> None:
        """The consumer's connection closed without an unregister (its process was killed on a
        live host: the kernel resets the socket): ``doChannelCloseEvent`` drops the channel at
        once and notifies the group, as an unregister does (spec 5.3)."""
        if self.b.consumers.get(group, {}).pop(channel, None) is not None:
            env.log("channel_closed", self.b.name, group=group, channel=channel)
            self.notify(env, group)

    def notify(self, env: Environment, group: str) -> None:
        """Write ``NOTIFY_CONSUMER_IDS_CHANGED`` on every channel of ``group`` (a write, for
        the idle close, whether or not it arrives); the reachable ones get it 1 ms later."""
        for channel, ch in self.b.consumers.get(group, {}).items():
            ch.last_write_ms = env.now
            if self.world.network.reachable(channel, self.b.name):
                env.schedule(1, Notify(channel, group))


@dataclass
class NameServer:
    name: str
    alive: bool = True
    brokers: dict[str, tuple[int, Broker]] = field(default_factory=dict)  # -> (last reg, broker)
    sessions: dict[str, int] = field(default_factory=dict)    # -> its connection's first reg

    def register(self, env: Environment, broker: Broker) -> None:
        """A registration (every 30 s); a broker new to it starts the connection's idle
        clock (``BrokerIdle``)."""
        if broker.name not in self.brokers:
            self.sessions[broker.name] = env.now
            env.schedule(IDLE_CLOSE_MS, BrokerIdle(self.name, broker.name, env.now))
        self.brokers[broker.name] = (env.now, broker)

    def forget(self) -> None:
        """A restarted name server starts empty."""
        self.brokers.clear()
        self.sessions.clear()


class NameServerEntity:
    def __init__(self, ns: NameServer, world: Services, scan_ms: int) -> None:
        self.ns = ns
        self.world = world
        self.scan_ms = scan_ms

    def handle(self, env: Environment, event: Event) -> None:
        if isinstance(event, BrokerScan):
            if self.ns.alive:
                for name in [n for n, (t, _) in self.ns.brokers.items()
                             if env.now - t > BROKER_EXPIRY_MS]:
                    del self.ns.brokers[name]
                    self.ns.sessions.pop(name, None)
                    env.log("broker_expired", self.ns.name, broker=name, by="scan")
            env.schedule(self.scan_ms, BrokerScan(self.ns.name))
        elif isinstance(event, BrokerIdle):
            entry = self.ns.brokers.get(event.broker)
            if not self.ns.alive or entry is None or \
                    self.ns.sessions.get(event.broker) != event.since:
                return                              # a connection already closed
            idle_at = entry[0] + IDLE_CLOSE_MS
            if idle_at > env.now:
                env.schedule_at(idle_at, event)
                return
            del self.ns.brokers[event.broker]
            del self.ns.sessions[event.broker]
            env.log("broker_expired", self.ns.name, broker=event.broker, by="idle close")

    def route(self, topic: str) -> TopicRoute | None:
        entries = [(b, b.topics[topic]) for _, b in self.ns.brokers.values() if topic in b.topics]
        if not entries:
            return None
        return TopicRoute(tuple(qd for _, qd in entries),
                          tuple(BrokerData(b.name, {0: b.address}) for b, _ in entries))

