"""Producers and consumers of the simulated cluster (spec 2.6, 2.7, 4, 5).

Both are thin drivers around the package: a producer sends through
``rocketlb_core.producer.send`` (the real selection, fault table and retry loop); a consumer
allocates with the registered strategy (``allocate``, from its own view) and keeps its table with
``rocketlb_core.consumer.rebalance.update_process_queue_table``.

Consumer offsets (4.9.8 and 5.3.3 alike), two values per queue:

- the **position** (``Consumer.offsets``, ``PullRequest.nextOffset``): where the next pull
  starts;
- the **consumed offset** (``Consumer.consumed``, the offset store's in-memory value): what
  ``ProcessQueue.removeMessage`` returns when a consume request finishes, the lowest offset still
  in the process queue (``msgTreeMap.firstKey()``), or ``queueOffsetMax + 1`` when it is empty,
  stored with ``updateOffset(mq, offset, increaseOnly=true)``. The simulator consumes a pulled
  range at once, so the two are equal except while a slow message (the ``slow_message`` event) is
  in flight: its offset holds the consumed offset back however far the position runs on.

The consumed offset reaches the master broker two ways: **with every pull**
(``DefaultMQPushConsumerImpl.pullMessage`` reads it ``READ_FROM_MEMORY`` and sends it with the
pull's ``commitOffset`` flag when it is > 0; the broker's ``PullMessageProcessor`` stores it,
``storeOffsetEnable``), and every ``persistConsumerOffsetInterval`` (5 s, first after 10 s;
``MQClientInstance.persistAllConsumerOffset``), and when a queue is dropped or the consumer shuts
down. A crash loses what was consumed since the last of these: on a flowing queue about one
pull, not 5 s, unless a slow message held the consumed offset back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocketlb_core.conditions import (
    FAIL_FAST_MS,
    HEARTBEAT_MS,
    PERSIST_OFFSET_MS,
    REBALANCE_WAIT_MS,
    ROUTE_POLL_MS,
)
from rocketlb_core.consumer.rebalance import (
    OffsetLookupError,
    ProcessQueue,
    compute_pull_from_where,
    update_process_queue_table,
)
from rocketlb_core.grpc.publishing import (
    MASTER_BROKER_ID,
    AtomicCounter,
    GrpcQueue,
    Permission,
    PublishingLoadBalancer,
)
from rocketlb_core.grpc.send import Outcome as GrpcOutcome
from rocketlb_core.grpc.send import ProducerSendLoop
from rocketlb_core.javamath import INT_MAX
from rocketlb_core.model import (
    MessageQueue,
    publish_queues,
    sort_client_ids,
    sort_queues,
    subscribe_queues,
)
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    TopicPublishInfo,
    send,
)
from rocketlb_core.producer.tables import SYSTEM_ERROR
from rocketlb_core.sim.events import (
    PULL_TICK_MS,
    Heartbeat,
    LifeTimer,
    Notify,
    PersistOffsets,
    Priority,
    Pull,
    Rebalance,
    RoutePoll,
    SendTick,
)
from rocketlb_core.sim.kernel import Environment, Event
from rocketlb_core.sim.ledger import FAILED, Ledger

if TYPE_CHECKING:
    from rocketlb_core.consumer.base import AllocateStrategy
    from rocketlb_core.model import TopicRoute
    from rocketlb_core.sim.cluster import Broker
    from rocketlb_core.sim.scenario import GroupSpec, MemberSpec, ProducerSpec
    from rocketlb_core.sim.services import Services


class Producer:
    """A producer instance with one sending thread and a target rate."""

    def __init__(self, spec: ProducerSpec, world: Services, env: Environment) -> None:
        self.spec = spec
        self.world = world
        self.name = spec.name
        self.rng = env.rng(spec.name)
        self.strategy = MQFaultStrategy(world.line,
                                        send_latency_fault_enable=spec.fault_tolerance,
                                        rng=env.rng(spec.name + "/fault"))
        self.route: TopicRoute | None = None
        self.tp: TopicPublishInfo | None = None
        self.interval = 1000.0 / spec.rate_per_s
        self.sent = 0                   # messages due so far
        self.busy_until = 0

    def start(self, env: Environment) -> None:
        start = self.spec.start_ms
        env.schedule_at(start + 10, RoutePoll(self.name))
        env.schedule_at(start + self.world.tick_ms, SendTick(self.name))

    def handle(self, env: Environment, event: Event) -> None:
        match event:
            case RoutePoll():                     # a timer re-arms itself (events are frozen)
                self.poll_route(env)
                env.schedule(ROUTE_POLL_MS, event)
            case SendTick():
                self.tick(env)
                if env.now < self.stop_ms or self.backlog() > 0:
                    env.schedule(self.world.tick_ms, event)

    def due_at(self, k: int) -> int:
        """When message ``k`` (0-based) of this producer is due."""
        return self.spec.start_ms + int(k * self.interval)

    def due_by(self, time_ms: int) -> int:
        """How many messages are due before ``time_ms`` (counted with ``due_at`` itself)."""
        limit = min(time_ms, self.stop_ms)
        k = max(0, int((limit - self.spec.start_ms) / self.interval))
        while k > 0 and self.due_at(k - 1) >= limit:
            k -= 1
        while self.due_at(k) < limit:
            k += 1
        return k

    def backlog(self) -> int:
        """Messages due by the stop time that the sending thread has not sent yet."""
        return max(0, self.due_by(self.stop_ms) - self.sent)

    @property
    def stop_ms(self) -> int:
        stop = self.spec.stop_ms
        return self.world.duration_ms if stop is None else stop

    def settle(self) -> None:
        """Bring back state a subclass keeps elsewhere (``simfast``'s compiled sends keep the
        random stream, counter and fault table in arrays between ticks); here, nothing."""

    def poll_route(self, env: Environment) -> None:
        route = self.world.query_route(self.name, self.spec.topic, self.rng)
        if route is None or route == self.route:
            return                                  # keep the cached route and counter
        self.route = route
        self.tp = TopicPublishInfo.from_route(self.spec.topic, route, self.world.line,
                                              rng=self.rng)
        env.log("producer_route", self.name, queues=[q.short() for q in self.tp.queues])

    def broker_model(self, mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        net, broker = self.world.network, self.world.brokers[mq.broker_name]
        resume = net.paused_until.get(mq.broker_name)
        if resume is not None and (self.name, mq.broker_name) not in net.partitions:
            # a paused process (SIGSTOP) keeps its connections: the request waits in the
            # socket and is answered when it resumes, or the client times out first
            wait = max(0, resume - start_ms)
            return AttemptResult(Outcome.SEND_OK,
                                 wait + broker.latency_ms(self.rng.gauss(0.0, 1.0)))
        if not net.reachable(self.name, mq.broker_name):
            if net.failure_is_fast(self.name, mq.broker_name):
                return AttemptResult(Outcome.REMOTING_ERROR,
                                     FAIL_FAST_MS[self.rng.randrange(len(FAIL_FAST_MS))])
            return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)       # times out
        qd = broker.topics.get(mq.topic)
        if qd is None or not qd.writable or mq.queue_id >= qd.write_queue_nums:
            return AttemptResult(Outcome.BROKER_ERROR, 1, SYSTEM_ERROR)
        return AttemptResult(Outcome.SEND_OK, broker.latency_ms(self.rng.gauss(0.0, 1.0)))

    def tick(self, env: Environment) -> None:
        """Send every message due before now (one sending thread: a slow send delays the next;
        each send starts at ``max(due, end of the previous send)`` in virtual time)."""
        end = self.stop_ms
        ledger = self.world.ledger
        if self.tp is None:
            self.poll_route(env)                 # tryToFindTopicPublishInfo asks at once
        while True:
            due = self.due_at(self.sent)
            if due >= end or due >= env.now or self.busy_until >= env.now:
                break                            # nothing due yet, or the thread is still busy
            self.send_one(due, ledger)

    def send_one(self, due: int, ledger: Ledger) -> None:
        """Send the next message (due at ``due``) through ``send()`` and count it."""
        self.world.settle_stores()                  # a queue's next offset, counted
        self.sent += 1
        if self.tp is None or not self.tp.ok():
            ledger.record_send(self.name, due, FAILED, error="No route info of this topic")
            return
        result = send(self.strategy, self.tp, self.broker_model, max(due, self.busy_until))
        self.busy_until = result.end_ms
        queue, offset = None, -1
        if result.stored and result.queue is not None:
            queue = result.queue
            offset = self.world.brokers[queue.broker_name].append(queue.topic, queue.queue_id)
        ledger.record_send(self.name, due, result.status, queue, offset,
                           len(result.attempts), result.end_ms - due,
                           None if queue is not None else result.error)


class Consumer:
    """A push consumer (one ``MQClientInstance``): heartbeats, route polls, the rebalance
    service, pulling and consuming, offset commits."""

    def __init__(self, member: MemberSpec, group: GroupSpec, world: Services, env: Environment,
                 client_id: str, strategy: AllocateStrategy) -> None:
        self.m, self.g, self.world = member, group, world
        self.name = member.name                       # also the channel id at the brokers
        self.client_id = client_id
        self.strategy = strategy
        self.rng = env.rng(member.name)
        self.alive = False
        self.incarnation = 0
        self.route: TopicRoute | None = None
        self.table: dict[MessageQueue, ProcessQueue] = {}
        self.offsets: dict[MessageQueue, int] = {}      # next offset to pull, per queue
        self.env = env
        # a slow message in flight per queue: (its offset, when its consumption ends); it holds
        # the queue's consumed offset back (``consumed``) until then
        self.slow: dict[MessageQueue, tuple[int, int]] = {}
        self.slow_next: int | None = None   # the next delivered message takes this long (ms)
        self.rebalance_token = 0
        self.last_rebalance = -10**9
        self.cursor = 0
        self._order_of: dict[MessageQueue, ProcessQueue] | None = None   # pull order's table
        self._order: list[MessageQueue] = []        # its queues not dropped, in queue order
        self._plan: list[tuple[MessageQueue, Broker, tuple[str, str, int], tuple[str, int]]] = []
        # the order with each broker and the group's offset key there
        self._pulled_at: int | None = None          # the last pull not yet in the table
        self._route_of: TopicRoute | None = None       # the route of the next two
        self._subscribed: frozenset[MessageQueue] = frozenset()   # its queues
        self._view: list[MessageQueue] = []            # sorted (rebalance_view's queue half)
        # for the brokers' idle close: its last request to each broker (heartbeat, member
        # list, commit; pulls are counted when it goes quiet), and where it went quiet when
        self.sent_at: dict[str, int] = {}
        self.quiet_since: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle
    def start(self, env: Environment) -> None:
        self.alive = True
        self.quiet_since = {}                          # a new process: new connections
        self.incarnation += 1
        self.table, self.offsets, self.slow, self.slow_next = {}, {}, {}, None
        env.log("consumer_start", self.name, client_id=self.client_id)
        self.poll_route(env)
        self.heartbeat(env)
        life = self.incarnation
        for timer, delay in ((RoutePoll, ROUTE_POLL_MS), (Heartbeat, HEARTBEAT_MS),
                             (Pull, PULL_TICK_MS), (PersistOffsets, 10_000)):
            env.schedule(delay, timer(self.name, life))
        self.wakeup(env)                               # rebalanceImmediately on start

    def crash(self, env: Environment, mode: str = "host") -> None:
        """Die without unregistering or committing. ``host``: the host vanishes (power loss, a
        frozen VM): each broker drops it about 120 s later, by its idle close (notifying) or
        its scan (not), whichever comes first (``sim.cluster``). ``process``: the process is
        killed on a live host (``kill -9``): its connections close, and every broker it could
        reach drops it at once and notifies the group."""
        if mode != "process":
            self.went_quiet(env, self.known_brokers())
        self.alive = False
        if mode == "process":
            env.log("consumer_crash", self.name, mode=mode)
            for broker in self.known_brokers():
                if self.world.network.reachable(self.name, broker):
                    self.world.broker_entity(broker).channel_closed(env, self.g.name, self.name)
                elif self.world.network.waits(self.name, broker):
                    self.world.network.pending.setdefault(broker, []).append(
                        ("channel_closed", (self.g.name, self.name)))
        else:
            env.log("consumer_crash", self.name)
        self.world.ownership_changed(env)

    def went_quiet(self, env: Environment, brokers: list[str]) -> None:
        """It stops talking to ``brokers`` now (its host vanished, a partition): its last
        request to each is its last pull there (now) if it owned queues there, else its last
        heartbeat, member-list query or commit; the broker holds its pending pulls."""
        pulls: dict[str, dict[MessageQueue, int]] = {}
        for mq, pq in self.table.items():
            if not pq.dropped:
                pulls.setdefault(mq.broker_name, {})[mq] = self.offsets.get(mq, 0)
        for broker in brokers:
            held = pulls.get(broker, {})
            last = env.now if held else self.sent_at.get(broker)
            if last is None:
                continue                            # never reached it: no channel there
            self.quiet_since[broker] = last
            self.world.broker_entity(broker).went_quiet(env, self.g.name, self.name, last,
                                                        held)

    def last_request(self, broker: str) -> int | None:
        """``Services.last_request``: ``None`` while it talks to ``broker``."""
        if self.alive and self.world.network.reachable(self.name, broker):
            return None
        return self.quiet_since.get(broker, self.sent_at.get(broker, 0))

    def shutdown(self, env: Environment) -> None:
        self.persist(env)
        self.alive = False
        for broker in self.known_brokers():
            if self.world.network.reachable(self.name, broker):
                self.world.broker_entity(broker).unregister(env, self.g.name, self.name)
            elif self.world.network.waits(self.name, broker):     # read at the resume
                self.world.network.pending.setdefault(broker, []).append(
                    ("unregister", (self.g.name, self.name)))
        env.log("consumer_shutdown", self.name)
        self.world.ownership_changed(env)

    def handle(self, env: Environment, event: Event) -> None:
        if not self.alive:
            return
        if isinstance(event, Notify):
            env.log("notified", self.name, group=event.group)
            self.wakeup(env)
            return
        if isinstance(event, Rebalance):
            if event.token == self.rebalance_token:
                self.rebalance(env)
            return
        if not isinstance(event, LifeTimer) or event.incarnation != self.incarnation:
            return                                     # a timer of an earlier life
        match event:                              # a timer of this life re-arms itself
            case RoutePoll():
                self.poll_route(env)
                env.schedule(ROUTE_POLL_MS, event)
            case Heartbeat():
                self.heartbeat(env)
                env.schedule(HEARTBEAT_MS, event)
            case Pull():
                self.pull(env)
                env.schedule(PULL_TICK_MS, event)
            case PersistOffsets():
                self.persist(env)
                env.schedule(PERSIST_OFFSET_MS, event)

    # ------------------------------------------------------------------ timers
    def known_brokers(self) -> list[str]:
        if self.route is None:
            return []
        return sorted(qd.broker_name for qd in self.route.queue_datas)

    def poll_route(self, env: Environment) -> None:
        route = self.world.query_route(self.name, self.g.topic, self.rng)
        if route is not None:
            self.route = route

    def heartbeat(self, env: Environment) -> None:
        for broker in self.known_brokers():
            if self.world.network.reachable(self.name, broker):
                self.sent_at[broker] = env.now
                self.world.broker_entity(broker).heartbeat(env, self.g.name, self.name,
                                                             self.client_id)
            elif self.world.network.waits(self.name, broker):     # read at the resume
                self.world.network.pending.setdefault(broker, []).append(
                    ("heartbeat", (self.g.name, self.name, self.client_id)))

    def wakeup(self, env: Environment) -> None:
        """``rebalanceImmediately``: run now (5.x: no sooner than 1 s after the last run)."""
        at = env.now
        wait = self.world.line.rules.rebalance_min_interval_ms
        at = max(at, self.last_rebalance + wait)
        self.rebalance_token += 1
        env.schedule_at(at, Rebalance(self.name, self.rebalance_token),
                        priority=Priority.REBALANCE)

    def rebalance(self, env: Environment) -> None:
        self.last_rebalance = env.now
        self.rebalance_topic(env)
        self.rebalance_token += 1
        env.schedule(REBALANCE_WAIT_MS, Rebalance(self.name, self.rebalance_token),
                     priority=Priority.REBALANCE)

    def rebalance_topic(self, env: Environment) -> None:
        topic, route = self.g.topic, self.route
        if route is None:
            return
        if route != self._route_of:
            self._route_of, self._subscribed = route, subscribe_queues(topic, route)
            self._view = sort_queues(self._subscribed)
        mq_set = self._subscribed
        if self.g.model == "BROADCASTING":
            target = set(mq_set)
            view_size = 0
        else:
            brokers = [qd.broker_name for qd in route.queue_datas]
            broker = brokers[self.rng.randrange(len(brokers))]   # a random broker of the route
            if not self.world.network.reachable(self.name, broker):
                env.log("rebalance_skipped", self.name, reason=f"{broker} unreachable")
                return
            self.sent_at[broker] = env.now              # findConsumerIdList
            cid_all = self.world.brokers[broker].consumer_ids(self.g.name)
            if not cid_all or not mq_set:
                return
            mq_all, cids = list(self._view), sort_client_ids(cid_all)
            target = set(self.strategy.allocate(self.g.name, self.client_id, mq_all, cids) or [])
            view_size = len(cids)
        self.settle()                                  # the table's pull times, for expiry
        step = update_process_queue_table(
            self.table, topic, target, env.now, pull_from_where=self.start_offset,
            remove_unnecessary=self.drop_queue)
        self.table = step.table
        for mq, offset in step.created:
            self.offsets[mq] = offset
        if step.changed:
            env.log("rebalance", self.name, view=view_size,
                    added=[q.short() for q, _ in step.created],
                    dropped=[q.short() for q in step.dropped],
                    owned=len(self.table))
            self.world.ownership_changed(env)

    def start_offset(self, mq: MessageQueue) -> int:
        """``computePullFromWhere``: the broker's committed offset, else the group's policy."""
        broker = self.world.brokers[mq.broker_name]
        self.world.settle_stores([mq])
        if not self.world.network.reachable(self.name, mq.broker_name):
            read = -2
        else:
            read = broker.query_offset(self.g.name, mq.topic, mq.queue_id)
            if self.g.model == "BROADCASTING":
                read = -1                   # broadcasting keeps offsets locally: none yet
        try:
            return compute_pull_from_where(
                self.g.consume_from, read, mq.topic,
                max_offset=broker.max_offset(mq.topic, mq.queue_id), search_offset=0,
                line=self.world.line)
        except OffsetLookupError:
            return -1

    def drop_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """``removeUnnecessaryMessageQueue`` (concurrent): persist the offset, forget it (a
        slow message still in flight no longer updates it: the queue is dropped)."""
        self.commit(mq)
        self.offsets.pop(mq, None)
        self.slow.pop(mq, None)
        return True

    def slow_message(self, duration_ms: int) -> None:
        """The next message this consumer is delivered takes ``duration_ms`` to consume."""
        self.slow_next = duration_ms

    def consumed(self, mq: MessageQueue) -> int | None:
        """The offset store's in-memory offset of ``mq`` (``None``: none yet): the position,
        or the offset of a slow message still in flight, the lowest offset in the process
        queue (``ProcessQueue.removeMessage``)."""
        slow = self.slow.get(mq)
        if slow is not None:
            if slow[1] > self.env.now:
                return slow[0]
            del self.slow[mq]                      # consumed: the offset jumps to the position
        return self.offsets.get(mq)

    def commit(self, mq: MessageQueue) -> None:
        """``updateConsumeOffsetToBroker``: the consumed offset to the queue's broker."""
        offset = self.consumed(mq)
        if offset is not None and self.g.model == "CLUSTERING" and \
                self.world.network.reachable(self.name, mq.broker_name):
            self.sent_at[mq.broker_name] = self.env.now
            self.world.brokers[mq.broker_name].offsets[(self.g.name, mq.topic, mq.queue_id)] = \
                offset

    def persist(self, env: Environment) -> None:
        for mq in self.table:
            self.commit(mq)

    def settle(self) -> None:
        """Write the last pull's time into the table: a pull marks every queue it visits
        pulled (``ProcessQueue.last_pull_ms``, which the rebalance's 120 s expiry reads), and
        that is done here, once, when the table is read, not per queue per pull."""
        at, self._pulled_at = self._pulled_at, None
        if at is not None and self._order_of is self.table:
            pulled = ProcessQueue(last_pull_ms=at)        # frozen: one for every queue
            for mq in self._order:
                self.table[mq] = pulled

    def pull(self, env: Environment) -> None:
        """Pull and consume, within the consumer's capacity, from every owned queue. Each pull
        carries the queue's consumed offset, which the (master) broker stores as it serves it
        (``commitOffset``; clustering only, and only a value > 0). A slow message in flight holds
        that offset back but never stops the queue's pulls: span flow control compares
        ``consumeConcurrentlyMaxSpan`` (2000) with the span of the messages *still held*
        (``ProcessQueue.getMaxSpan()``), and here a pulled range is consumed at once, so the
        slow message is all a process queue holds and the span stays under it (upstream puts
        a pull off 50 ms while it is over, rocketmq-client 4.9.8
        ``DefaultMQPushConsumerImpl.pullMessage``; issue 45)."""
        budget = int(self.g.consume_rate_per_s * PULL_TICK_MS / 1000)
        if self._order_of is not self.table:        # a rebalance or a start made a new table
            self._order_of = self.table
            self._order = sorted(q for q, pq in self.table.items() if not pq.dropped)
            brokers, group = self.world.brokers, self.g.name
            self._plan = [(mq, brokers[mq.broker_name], (group, mq.topic, mq.queue_id),
                           (mq.topic, mq.queue_id)) for mq in self._order]
        plan = self._plan
        if not plan:
            return
        self.world.settle_stores(self._order)
        self._pulled_at = env.now                   # every queue of the order: ``settle``
        self.cursor = (self.cursor + 1) % len(plan)
        ledger, net = self.world.ledger, self.world.network
        offsets, name, slows = self.offsets, self.name, self.slow
        check = bool(net.down or net.partitions)
        commits = self.g.model == "CLUSTERING"
        for mq, broker, key, stored in plan[self.cursor:] + plan[:self.cursor]:
            if budget <= 0:
                break
            if check and not net.reachable(name, mq.broker_name):
                continue
            start = offsets.get(mq, 0)
            limit = broker.store.get(stored, 0)     # Broker.max_offset
            consumed = start
            if slows:
                slow = slows.get(mq)
                if slow is not None:
                    if slow[1] > env.now:
                        consumed = slow[0]          # held back; the pulls go on (no cap)
                    else:
                        del slows[mq]
            if commits and consumed > 0:
                broker.offsets[key] = consumed     # the pull's commitOffset, stored
            take = min(budget, limit - start)
            if take <= 0:
                offsets.setdefault(mq, start)       # nothing new: the position is kept
                continue
            ledger.record_delivery(env.now, name, mq, start, take)
            offsets[mq] = start + take
            budget -= take
            if self.slow_next is not None:          # its first message is the slow one
                slows[mq] = (start, env.now + self.slow_next)
                self.slow_next = None


GRPC_MAX_ATTEMPTS = 3
"""``ProducerBuilder.setMaxAttempts``'s default (rocketmq-client-java 5.0.8)."""
GRPC_REQUEST_TIMEOUT_MS = 3_000
"""``ClientConfigurationBuilder``'s ``requestTimeout``: one attempt's deadline."""
GRPC_HEARTBEAT_MS = 10_000
"""``ClientManagerImpl.HEART_BEAT_PERIOD`` (the first 1 s after the start)."""


class GrpcProducer(Producer):
    """A producer of the gRPC client (rocketmq-client-java 5.0.8; scenario ``client =
    "grpc"``): the core's ``PublishingLoadBalancer`` (its counter from the producer's random
    stream, ``RandomUtils.nextInt(0, Integer.MAX_VALUE)``, kept across route updates) and
    ``ProducerSendLoop`` (candidates taken once, the retry walking them, a failed attempt
    isolating its endpoints, at most 3 attempts of 3 s each); heartbeats every 10 s (first
    after 1 s) to the route's brokers end the isolation of those that answer. Assumed: a Proxy
    in local mode, one per broker (each broker its own endpoints); no message groups. The
    route is fetched at the first send and every 30 s after 10 s (``ClientImpl.startUp``).
    Its queue is the client's choice; a local-mode Proxy stores on that broker, at a queue of
    it drawn at random, and a cluster-mode one picks the queue itself (``grpc.proxy_send``;
    ``replay.grpc_producer``'s docstring)."""

    def __init__(self, spec: ProducerSpec, world: Services, env: Environment) -> None:
        super().__init__(spec, world, env)
        self.counter = AtomicCounter(self.rng.randrange(INT_MAX))
        self.loop = ProducerSendLoop(GRPC_MAX_ATTEMPTS)
        self.balancer: PublishingLoadBalancer | None = None
        self.polled = False

    def start(self, env: Environment) -> None:
        start = self.spec.start_ms
        env.schedule_at(start + 10_000, RoutePoll(self.name))
        env.schedule_at(start + 1_000, Heartbeat(self.name))
        env.schedule_at(start + self.world.tick_ms, SendTick(self.name))

    def handle(self, env: Environment, event: Event) -> None:
        match event:
            case Heartbeat():
                net = self.world.network
                if self.route is not None and self.loop.isolated:
                    self.loop.rejoin(qd.broker_name for qd in self.route.queue_datas
                                     if net.reachable(self.name, qd.broker_name)
                                     and not net.waits(self.name, qd.broker_name))
                env.schedule(GRPC_HEARTBEAT_MS, event)
            case _:
                super().handle(env, event)

    def poll_route(self, env: Environment) -> None:
        self.polled = True
        route = self.world.query_route(self.name, self.spec.topic, self.rng)
        if route is None or route == self.route:
            return                                  # keep the cached route and balancer
        self.route = route
        queues = [GrpcQueue(q.topic, q.broker_name, MASTER_BROKER_ID, q.broker_name,
                            q.queue_id, Permission.READ_WRITE)
                  for q in publish_queues(self.spec.topic, route)]
        self.balancer = PublishingLoadBalancer(queues, self.counter) if queues else None
        env.log("producer_route", self.name, queues=[q.short() for q in queues])

    def tick(self, env: Environment) -> None:
        if not self.polled:
            self.poll_route(env)                 # the route is fetched before the first send
        end, ledger = self.stop_ms, self.world.ledger
        while True:
            due = self.due_at(self.sent)
            if due >= end or due >= env.now or self.busy_until >= env.now:
                break
            self.send_one(due, ledger)

    def send_one(self, due: int, ledger: Ledger) -> None:
        self.world.settle_stores()
        self.sent += 1
        if self.balancer is None:
            ledger.record_send(self.name, due, FAILED, error="No writable message queue found")
            return
        clock = max(due, self.busy_until)
        errors: list[str] = []

        def outcome(q: GrpcQueue, attempt: int) -> GrpcOutcome:
            nonlocal clock
            mq = MessageQueue(q.topic, q.broker, q.queue_id)
            r = self.broker_model(mq, clock, GRPC_REQUEST_TIMEOUT_MS)
            if r.outcome is Outcome.SEND_OK and r.latency_ms < GRPC_REQUEST_TIMEOUT_MS:
                clock += r.latency_ms
                return "ok"
            clock += min(r.latency_ms, GRPC_REQUEST_TIMEOUT_MS)
            errors.append("DEADLINE_EXCEEDED" if r.latency_ms >= GRPC_REQUEST_TIMEOUT_MS
                          else "UNAVAILABLE" if r.outcome is Outcome.REMOTING_ERROR
                          else "INTERNAL_SERVER_ERROR")
            return "fail"

        result = self.loop.send(self.balancer, outcome)
        self.busy_until = clock
        if result.ok:
            q = result.attempts[-1].queue
            queue = MessageQueue(q.topic, q.broker, q.queue_id)
            offset = self.world.brokers[q.broker].append(q.topic, q.queue_id)
            ledger.record_send(self.name, due, "SEND_OK", queue, offset, len(result.attempts),
                               clock - due)
        else:
            ledger.record_send(self.name, due, FAILED, None, -1, len(result.attempts),
                               clock - due, errors[-1])
