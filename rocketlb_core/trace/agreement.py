"""The model against what a live RocketMQ did (issue 14; chapter 10): given an imported trace and
the ground truth of a recording, how much of what the real clients did does the package
predict, and what explains the rest?

**Producer** (``producer_agreement``). The package's send loop (``producer.send``) runs each send
of the ground truth in order, at its recorded time, with the recorded client line and
``sendLatencyFaultEnable``. Its brokers answer as the imported trace says
(``ObservedBrokers``): an attempt fails only where the producer's own client log has it fail
(``UNLOGGED_DOWN``: the client logs every failed attempt; without the whole log, a broker the
trace has ``down`` refuses, ``clean``, or never answers, ``silent``); otherwise the attempt
succeeds after the ``costTime`` the message trace recorded for this very message (joined by
msgId; within its budget, ``STORED_IN_BUDGET``), or the window's median when the package
chose another broker than the real client did. The route is what the client itself logged:
each ``route info changed`` line builds a new publish list (from the first send that began
after it, or ``LOG_BEFORE_INSTALL_MS`` later where the old list still explains the send: the
client logs the change before it installs the list), whose round-robin counter starts at a
random value upstream; that value is **inferred** from the first send after the change
(the counter start that makes the package choose the queue the client chose), and that send
is counted as inferred, not as agreement. 5.x with fault tolerance on also resets the counter to
a random value when it retries (``resetIndex``); such a send is inferred the same way
(``reset``). An attempt the client logged as failed (``sendKernelImpl exception``) ends in the
package's loop when it ended live (``FAILURE_MATCH_MS``; its line may be written up to
``LOG_LAG_MS`` late): a timeout that returned in its deadline's very millisecond leaves the
loop a 0 ms attempt, one more step of the counter (issue 32). An ``MQBrokerException`` logged
with it is that attempt's answer (``BROKER_ERROR`` with its code): ``sendDefaultImpl`` throws
at once on a code outside ``retryResponseCodes`` (e.g. 2, ``[TIMEOUT_CLEAN_QUEUE]broker
busy``), without the retry's select. A logged failure names its queue, and only the loop's
attempt at that queue meets it (a client on the default topic's route, ``TBW102``: four queues
a broker where the topic has one, sends to queues 1 to 3 answered with code 1 ``request
queueId[N] is illegal``, seen live on a loaded host whose name server did not answer the
first lookup): a counter start is inferred from the queues of the failed attempts as well
as the final one; the fault item then holds the ``RT`` the client reported (``LOGGED_RT``:
``pickOneAtLeast`` sorts by it). A broker that answered was up: ``check_recording`` leaves
out the outages the importer dated from such an answer (``ANSWERED``). With every broker
isolated, 4.x's ``pickOneAtLeast`` steps a counter of its own whose random start the check
infers from the first send it decides (``WORST_INFERRED``, counted as inferred). A send made
before the client had any route fails without an attempt (``NO_ROUTE``), and so does the send
whose route lookup outlasted its timeout (``LATE_ROUTE``: the route logged more than
``sendMsgTimeout`` after the send began; ``sendDefaultImpl`` selects, then throws
"sendDefaultImpl call timeout"); both are counted as ``no_route``. Every other send either
agrees (same final queue, or both failed) or is explained by a cause:

* ``in flight at a change``: the send was under way when a broker's observed condition changed
  (its attempt interval holds a ``down``/``up`` time of the trace): what it met depends on
  timing inside the broker the trace does not record;

or else it is ``unexplained``, and the tests fail on it.

**Allocation** (``allocation_agreement``). Every ``rebalanced result changed`` line a real
consumer logged for the topic is compared with the group's strategy run on a member list and
the queues the consumer had then: the route its own log last stated (``route info changed``:
the readable queues; after a broker's kill the clients logged ``mqAllSize=6`` of 9), and the
logged ``mqAllSize`` and ``cidAllSize`` must match. The lists, in order: the imported
membership at the logged time (``exact``), either side of a change within the logs' precision
(``near_change``), then each list one broker of the consumer's route held then
(``BrokerViews``, from each broker's own log, connection by connection): ``STALE_VIEW``
(``stale_view``), since ``findConsumerIdList`` asks one broker and the brokers' views differ
while one is paused. ``check_recording`` also reports how often and how long the brokers
disagreed (``brokers_disagree``).

Every verdict and reading named here is registered in ``trace.verdicts``, with the upstream
behaviour behind it and the tests and fixtures that show it (the book's page
``book/guide/verdicts.md`` is generated from it); the constants below take their values there.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.model import (
    MessageQueue,
    QueueData,
    RouteStep,
    TopicRoute,
    publish_queues,
    route_step,
)
from rocketlb_core.producer import (
    AttemptResult,
    FaultTable4,
    MQFaultStrategy,
    Outcome,
    ProducerLine,
    SendConfig,
    SendMode,
    ThreadLocalIndex,
    TopicPublishInfo,
    send,
)
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace import verdicts
from rocketlb_core.trace.clientlog import stamp_ms
from rocketlb_core.trace.schema import TraceError

ATTEMPT_SLACK_MS = 5
"""The trace's conditions change at an attempt's start as the client logged it, a few ms after
the application called ``send`` (when the walk runs it): conditions are read that much later."""
LOG_BEFORE_INSTALL_MS = 20
"""A client logs ``route info changed`` before it builds and installs the new publish list
(``MQClientInstance.updateTopicRouteInfoFromNameServer``: the log line, then the broker
addresses, then ``topicRouteData2TopicPublishInfo`` and each producer's update), so a send that
began up to this long after the line may still pick from the old list (seen live: a send in
the line's very millisecond that continued the old counter)."""
CHECK_LAG_MS = 20
"""How long after a failed attempt's logged end the send loop may take to select again and
check its budget: the client logs the exception, stack trace and all, in between. A send that
ended "sendDefaultImpl call timeout" with no failed attempt logged after its last one, which
left at most this much of the budget, found the budget spent at that check: it made no further
attempt. Live on 5.3.3 (CI's random scenario 176525667340514: four threads' sends timed out at
one paused broker in the same millisecond), a thread's attempt timed out with 5 ms of its
3,000 ms left, and the next selection found the budget spent; a check that made one more
attempt in those 5 ms left the thread's counter a step ahead, and 437 sends unexplained."""
ZERO_ATTEMPT_SLACK_MS = 2
"""A logged timeout whose end the check dates up to this many ms past the budget still ended in
the deadline's millisecond when the client logged the 0 ms attempt after it (``RT`` at most
this): the check's attempt begins at the send's time, a millisecond or two before the client's
``beginTimestampPrev``, so its duration is that much longer than the logged ``RT``. Live on
5.3.3 (``data/live/orderly-locks-5``, first recording): an ``RT: 3000ms`` timeout at broker-a,
then ``RT: 1ms`` at broker-b ("sendKernelImpl call timeout"), then the third selection found
the budget spent; a check that stopped after the first attempt left the round-robin counter
two steps behind, and 521 sends unexplained."""
FAILURE_MATCH_MS = 10
"""An attempt of the package's loop is the failed attempt the client logged
(``sendKernelImpl exception``: its end and ``RT``) when they start this close at one broker;
it then ends when the logged one ended (the client's own clock: its attempt may begin a
millisecond after ``send`` was called), a timeout's overshoot included
(``AttemptResult.overshoot_ms``): a timeout in the deadline's very millisecond leaves the loop
a 0 ms attempt (issue 32)."""
LOG_LAG_MS = 25
"""A logged failure's start is its line's stamp less its ``RT``; the stamp is taken when the
line is written, after the attempt ended (``sendDefaultImpl``: ``endTimestamp``, then
``log.warn``), so the estimate is never before the attempt's start but may be after it: live, on
a loaded host, a refused connect that took 2 ms was logged 27 ms after the connection's
``closeChannel`` (issue 32's random scenario, p2-off). A logged failure may start this much
later than ``FAILURE_MATCH_MS`` allows before (less than the 40 ms between two sends)."""
_SEND_FAILED = re.compile(r"Send \[(?P<times>\d{1,3})\] times, still failed, cost "
                          r"\[(?P<cost>\d{1,9})\]ms")
"""``sendDefaultImpl``'s exception after its last attempt: how many it made and the send's cost
(``System.currentTimeMillis() - beginTimestampFirst``)."""
PERM_READ = 4
"""``PermName.PERM_READ``: a broker's queues of a topic are in a consumer's subscription when
its permission has this bit."""
AGREE = verdicts.text("producer", "AGREE")
INFERRED = verdicts.text("producer", "INFERRED")
IN_FLIGHT = verdicts.text("producer", "IN_FLIGHT")
RESET = verdicts.text("producer", "RESET")
HIDDEN_RESET = verdicts.text("producer", "HIDDEN_RESET")
WORST_INFERRED = verdicts.text("producer", "WORST_INFERRED")
"""4.x with fault tolerance on: when every broker of the list is isolated, ``pickOneAtLeast``
(``LatencyFaultToleranceImpl``, 4.9.8 lines 66-84) sorts the fault items and returns the
``whichItemWorst.incrementAndGet() % half``-th: a ``ThreadLocalIndex`` of the fault table
(line 30), one per producer, never reset, whose start is ``Math.abs(random.nextInt())``
(``ThreadLocalIndex`` lines 27-35), which no log states. The check starts it at
``WORST_START``; the first send whose queue needs another start is checked with each of
``WORST_STARTS`` starts (a multiple of every ``half`` up to 4, 9 brokers), counted as inferred,
not as agreement."""
WORST_START = 0
"""The start the check gives ``whichItemWorst`` until a send shows it (``WORST_INFERRED``)."""
WORST_STARTS = 12
"""The ``whichItemWorst`` starts tried (``WORST_INFERRED``): lcm(1, 2, 3, 4)."""
ISOLATION_EDGE_MS = 2
"""How much sooner a broker's isolation may end than the check dates it: the client starts
the fault item at its attempt's end, the log line's stamp comes after (seen live on 5.3.3: the
client back on the broker 1 ms before the check's end of its 10 s isolation)."""
UNLOGGED_DOWN = verdicts.text("producer", "UNLOGGED_DOWN")
"""Not a verdict: how the check reads a producer's own client log (``ObservedBrokers.
logs_complete``). The trace's conditions date a broker ``down`` from any producer's failed
attempt to the next attempt stored there, but a failure need not mean the broker was down:
live on 5.3.3 (issue 32's soak, fixture ``in-flight-gap-5a``), a first send whose route lookup
took 2.3 s timed out at broker-b with 665 ms left, the trace had broker-b down for the next
11 s, and the check failed the producer's later attempts there (isolating it for 10 s more)
while the client stored at broker-b. ``sendDefaultImpl`` logs every exception it retries or
throws (``sendKernelImpl exception``, 4.9.8 ``DefaultMQProducerImpl`` lines 595-640), so with
the producer's whole log the check takes failures from the log alone."""
STORED_IN_BUDGET = verdicts.text("producer", "STORED_IN_BUDGET")
"""Not a verdict: the attempt at which the real client stored the message had its answer
within the budget the loop gave it, or ``invokeSync`` would have thrown a timeout; the message
trace's ``costTime`` (hooks included) and the client's measured send may pass it by a few ms.
Live on 5.3.3 (fixture ``in-flight-gap-5b``) a send of 3,018 ms stored at a broker just
resumed had a trace ``costTime`` of 3,001 ms, and the check had it time out."""
FIRST_ATTEMPT_LOGGED = verdicts.text("producer", "FIRST_ATTEMPT_LOGGED")
"""Not a verdict: the send whose lookup fetched the first route begins its first attempt when
the route came (``send``'s ``lookup_ms``), but the client logs ``route info changed`` before it
installs the list and opens the broker's channel: live on 4.9.8 on a loaded host (issue 32's
first soak, scenario 34101492936083) the first attempt began 91 ms after the line, with 127 ms
of its budget left, and failed (``sendMessage call timeout``, ``RT`` 217 ms) at broker-a, which
4.x then isolates for ten minutes. When that first attempt failed, the producer's earliest
logged failure between the route's line and the next send (or the send's timeout) is that
attempt, and its start is when the attempt began."""
RESTART_ANSWERS = verdicts.text("allocation", "RESTART_ANSWERS")
"""Not a verdict: a broker killed and restarted by the scenario is left out of the
allocation check's candidate views (``STALE_VIEW``) from the kill until its new process
started (its log's first line), not until the recorder saw its registration. Live on 4.9.7
(issue 32's third soak, scenario 92987622203664, fixture ``restart-answers-4``), broker-a's new
process started 8 s after the restart began and answered a consumer's ``findConsumerIdList``
with the one member that had sent it a heartbeat yet (``cidAllSize=1``), 4.4 s before the
recorder saw it listed."""
UNEXPLAINED = verdicts.text("producer", "UNEXPLAINED")
LOST = verdicts.text("producer", "LOST")
"""What a oneway send's row says when its call returned and no broker stored its message."""
WRITTEN_NOT_STORED = verdicts.text("producer", "WRITTEN_NOT_STORED")
"""A oneway send (issue 45) whose call returned without an error but whose message no broker
stored (not in the topic's dump), and whose queue the model puts on a broker then killed,
or paused and then killed before it resumed (what its socket held was never read: live on
4.9.8, fixture ``paused-killed-oneway-4``; ``ordered_agreement.lost_spans``). On
5.x, ``invokeOneway`` connects asynchronously and drops the request when the connection
fails (5.3.3 ``NettyRemotingClient``: no exception, so the send loop reports the call's
short time as a success, and nothing is isolated); 4.9.8 throws ``RemotingConnectException``.
Which queue it took is not recorded."""
REFUSED_BUSY = verdicts.text("producer", "REFUSED_BUSY")
"""A oneway send whose message no broker stored, whose queue the model puts on a broker that,
within ``REFUSED_WITHIN_MS`` of the call, sent the client a reply that matched no request with
code 2 (SYSTEM_BUSY: the broker's flow control, ``[TIMEOUT_CLEAN_QUEUE]broker busy``, refuses a
request that waited in its send queue too long, and answers even a oneway one, which nothing
waits for: the client logs ``receive response ... but not matched any request``). Live on
5.3.3 (issue 45's soak, seed 20261131, a loaded host): two oneway messages of a 4-thread
producer, refused 0.4 s after their calls by broker-a and broker-c, were in no queue. Each such
reply explains one message."""
ILLEGAL_QUEUE = verdicts.text("producer", "ILLEGAL_QUEUE")
"""A oneway send whose message no broker stored, whose queue the model puts at a queue id its
broker does not hold for the topic (not below the larger of the broker's read and write queue
counts in the route the recording read from the brokers): the broker refuses it (``request
queueId[N] is illegal``) and answers a oneway request with nothing. The client sends there when
its route is not the brokers': live on 5.3.3 (CI, soak seed 3975904713, a loaded host), a
4-thread oneway producer's first lookup found no route in time, so it fell back to the default
topic's (``TBW102``: four queues a broker, where the brokers held one) and 691 messages for
queues 1 to 3 were in no queue (facts producer.default-topic-route-fallback-5,
broker.illegal-queue-id-unanswered-for-oneway; a sync send there fails with the broker's code
instead, ``tests/fixtures/live/default-route-4``)."""
REFUSED_WITHIN_MS = 3000
"""A busy reply is read at most this long after the oneway call it refused (the flow control
refuses what waited in the send queue ``waitTimeMillsInSendQueue``, 200 ms by default, and more)."""
SYSTEM_BUSY = 2
"""``ResponseCode.SYSTEM_BUSY``."""
INFER_FIRST_LATENCY = True
"""Whether the check keeps both bounds of the latency the send that looked the route up
reported: the trace's ``costTime`` (its stored attempt alone) and the send's end less its
route's line (an attempt that began at once), until the sends tell the fault tables apart
(fixture ``first-latency-4``). Off: the end less the line, as before."""
IN_BROKER_MS = 500
"""A oneway message sent this long before its broker was killed may die with it: read, not yet
stored (live on 5.5.0: two sent 100 and 47 ms before the kill were in no queue after the
restart)."""
NO_ROUTE = verdicts.text("producer", "NO_ROUTE")
"""What the model predicts for a send made before its client had the topic's route: it fails
before any attempt (``send``: "No route info of this topic"); live, the name-server lookup
timed out (issue 32's 5.x recording on a loaded host). It agrees when the real send failed."""
LATE_ROUTE = verdicts.text("producer", "LATE_ROUTE")
"""What the model predicts for a send whose route lookup outlasted its timeout (the route logged
more than ``sendMsgTimeout`` after the send began): the budget ran out before the first attempt,
and it fails before any. It agrees when the real send failed."""


_NOT_OK = frozenset(o.value for o in Outcome if o.is_status and o is not Outcome.SEND_OK)
STATUS_COPY = verdicts.text("producer", "STATUS_COPY")
"""Not a verdict: how the check reads a recording with slaves (issue 45). A 4.x
``SYNC_MASTER`` writes a message before it answers SLAVE_NOT_AVAILABLE (no slave connected) or
FLUSH_SLAVE_TIMEOUT (its slave silent for ``slaveTimeout``, 3 s), so the topic's dump holds a
copy of every such attempt, and the client logs none of them: ``sendDefaultImpl`` returns the
reply, or with ``retryAnotherBrokerWhenNotStoreOK`` goes on to the next attempt, without a
line (fact producer.retry-another-broker-retries-and-returns-last-status). An attempt at a
queue holding a copy, not the send's last and with no logged failure, was answered with a
status other than SEND_OK; every copy must be where one of the model's attempts went, or the
send is unexplained (``copies_unexplained``)."""


@dataclass
class ObservedBrokers:
    """The brokers as the imported trace observed them (see the module docstring)."""

    conditions: Conditions
    costs: dict[str, int]                       # msgId -> costTime of the stored attempt
    msg_id: str | None = None                   # the message being sent
    broker: str | None = None                   # where the real client stored it
    send_end: int | None = None
    """When the real send returned (its start plus the client's measured ``cost_ms``, trace
    time): the stored attempt ended then. Upstream reports ``endTimestamp -
    beginTimestampPrev`` around the whole ``sendKernelImpl`` (4.9.8 ``DefaultMQProducerImpl``
    lines 565-577), hooks and a first connection included, which the trace's ``costTime``
    leaves out: live, a first send to broker-c took 599 ms by the client, 468 ms by the trace,
    and the 4.x table isolates from 550 ms (issue 32's soak, fixture ``slow-first-send-4``)."""
    mode: SendMode = SendMode.SYNC
    """How the application sent (issue 45): a ``ONEWAY`` call makes one attempt, and that
    attempt is the request's write (``invokeOneway``), not the broker's answer: it succeeds,
    in the call's measured time (``oneway_ms``; from the attempt's start when the send's end
    is known), unless the client logged it failed (a
    refused connection), whatever the broker's condition (a paused broker's socket takes
    the write, and the broker stores the message when it resumes)."""
    oneway_ms: int = 0
    within_deadline: bool = False
    """Whether the real send failed with "Send [N] times, still failed, cost [C]ms" where C
    is at most the send's timeout: the loop's last ``timeout < costTime`` check found it not
    yet spent, so a timeout the client logged with an ``RT`` past its budget (a request timeout
    of 2,997 ms after 3 ms of the budget, ``RT: 3001ms``, the send's cost still ``[3000]ms``:
    live on 5.3.3, fixture ``budget-race-5``) left the loop its 0 ms attempts: it ended in
    the deadline's very millisecond (``overshoot_ms`` 0)."""
    call_timeout: bool = False
    """Whether the real send failed with "sendDefaultImpl call timeout": the loop's last
    selection found its budget spent (``timeout < costTime``) and made no attempt. A timeout
    whose ``RT`` equals the budget and after which the client logged no failed attempt then
    ended past the deadline (the client takes the next ``beginTimestampPrev`` after
    selecting, a millisecond or more later): no 0 ms attempt (``TIMER_OVERSHOOT_MS``); one
    that the log shows followed by the 0 ms attempt's failure (issue 32) keeps it, and the
    selection after that one found the budget spent. Live on 5.3.3 (random scenario
    228467144710710, fixture ``call-timeout-5``), an ``RT: 3000ms`` timeout of a 3,000 ms budget
    ended the send so, and a check that made the 0 ms attempt isolated a healthy broker for
    10 s: 50 sends unexplained."""
    failed: dict[str, list[tuple[int, int] | tuple[int, int, int | None]
                        | tuple[int, int, int | None, int | None]]] = field(
        default_factory=dict)
    """Per broker, the producer's logged failed attempts: (start, ``RT``), trace time, the
    response code of an ``MQBrokerException`` (``None``: no answer, a remoting error) and the
    queue id the line names (``None``: not known; any queue of the broker matches)."""
    logs_complete: bool = False
    """Whether ``failed`` is every failed attempt of this producer (its client log, read
    whole): ``sendDefaultImpl`` logs each exception it retries or throws (``sendKernelImpl
    exception``), so an attempt that meets no logged failure did not fail, whatever the
    trace's conditions say of its broker (``UNLOGGED_DOWN``)."""
    copies: Mapping[int, Sequence[tuple[str, int]]] | None = None
    """Per send (its seq), every queue the topic's dump found its message in (a recording with
    slaves, issue 45; ``None``: not known). An attempt at a queue that holds a copy, other than
    where the send ended and with no logged failure, was answered with a send status other than
    SEND_OK (``STATUS_COPY``)."""
    seq: int | None = None                      # the send being checked
    queue: int | None = None                    # the queue id the real client ended at
    status: str | None = None                   # the real send's status (its row)
    retry_not_stored: bool = False
    """``retryAnotherBrokerWhenNotStoreOK``: a status other than SEND_OK is retried."""

    def _logged(self, broker: str, start_ms: int,
                queue_id: int | None = None) -> tuple[int, int | None] | None:
        best: tuple[int, int, int | None] | None = None
        for f in self.failed.get(broker, ()):
            t, rt, code = f[0], f[1], (f[2] if len(f) > 2 else None)
            logged_q = f[3] if len(f) > 3 else None
            if queue_id is not None and logged_q is not None and logged_q != queue_id:
                continue           # another queue of that broker: another attempt (QUEUE_ID)
            if -FAILURE_MATCH_MS <= t - start_ms <= FAILURE_MATCH_MS + LOG_LAG_MS and (
                    best is None or abs(t - start_ms) < abs(best[0] - start_ms)):
                best = (t, rt, code)
        return None if best is None else (best[0] + best[1], best[2])

    def _zero_attempt_at(self, ms: int) -> bool:
        """Whether the client logged a failed attempt of at most ``ZERO_ATTEMPT_SLACK_MS``
        that began at ``ms``: the 0 ms attempt a loop makes when a timeout returned in the
        deadline's very millisecond."""
        return any(-FAILURE_MATCH_MS <= f[0] - ms <= FAILURE_MATCH_MS + LOG_LAG_MS
                   and f[1] <= ZERO_ATTEMPT_SLACK_MS
                   for rows in self.failed.values() for f in rows)

    def _failed_near(self, ms: int) -> bool:
        """Whether the client logged a failed attempt (at any broker) that began at ``ms``."""
        return any(-FAILURE_MATCH_MS <= f[0] - ms <= FAILURE_MATCH_MS + LOG_LAG_MS
                   for rows in self.failed.values() for f in rows)

    def logged_failure(self, broker: str, start_ms: int,
                       queue_id: int | None = None) -> int | None:
        """When the failed attempt the client logged at ``broker`` (at ``queue_id``, when
        given) starting within ``FAILURE_MATCH_MS`` of ``start_ms`` (the closest) ended, if
        there is one."""
        logged = self._logged(broker, start_ms, queue_id)
        return None if logged is None else logged[0]

    def __call__(self, mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        logged = self._logged(mq.broker_name, start_ms, mq.queue_id)
        if logged is not None:        # this very attempt failed: it ended when logged
            end, code = logged
            took = max(0, end - start_ms)
            if code is not None and took < budget_ms:     # the broker answered an error code
                return AttemptResult(Outcome.BROKER_ERROR, took, response_code=code)
            over = took - budget_ms if took >= budget_ms else None
            if over is not None and self.within_deadline:
                over = 0                    # the send's cost says the deadline held
            if over == 0 and self.call_timeout and not self._failed_near(end):
                over = None                 # past the deadline: the loop stops (call_timeout)
            if over is not None and 0 < over <= ZERO_ATTEMPT_SLACK_MS and self.call_timeout \
                    and self._zero_attempt_at(end):
                over = 0                    # the client's own check let a 0 ms attempt go
            if over is None and self.call_timeout and budget_ms - took <= CHECK_LAG_MS \
                    and not self._failed_near(end):
                # the loop's next check found the budget spent: no further attempt (CHECK_LAG_MS)
                return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)
            return AttemptResult(Outcome.REMOTING_ERROR, took, overshoot_ms=over)
        if self.copies is not None and self.seq is not None:
            here = (mq.broker_name, mq.queue_id)
            if here == (self.broker, self.queue):
                if self.status in _NOT_OK:          # the reply the send returned
                    return AttemptResult(Outcome(self.status), round(
                        self.conditions.latency_at(mq.broker_name, start_ms).median_ms))
            elif here in self.copies.get(self.seq, ()):
                # written, and answered with a status other than SEND_OK (STATUS_COPY): which
                # one no record says; a 4.x SYNC_MASTER without its slave answers this one
                return AttemptResult(Outcome.SLAVE_NOT_AVAILABLE, round(
                    self.conditions.latency_at(mq.broker_name, start_ms).median_ms))
        if self.mode is SendMode.ONEWAY:
            # the call's time from the attempt's start: a first send's route lookup came
            # before it (live on 4.9.8: a first oneway call of 551 ms, its lookup included;
            # reported whole, 4.x's table would have isolated its broker for 30 s)
            took = (self.oneway_ms if self.send_end is None
                    else max(0, self.send_end - start_ms))
            return AttemptResult(Outcome.SEND_OK, min(took, max(0, budget_ms - 1)))
        mode = (None if self.logs_complete else
                self.conditions.down_at(mq.broker_name, start_ms + ATTEMPT_SLACK_MS))
        if mode == "clean":
            return AttemptResult(Outcome.REMOTING_ERROR, 1)
        if mode is not None:
            return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)
        if self.msg_id in self.costs and mq.broker_name == self.broker:
            took = self.costs[self.msg_id]
            if self.send_end is not None:
                took = max(took, self.send_end - start_ms)
            # the client had its answer within the attempt's budget (``STORED_IN_BUDGET``)
            return AttemptResult(Outcome.SEND_OK, min(took, max(0, budget_ms - 1)))
        return AttemptResult(Outcome.SEND_OK, round(
            self.conditions.latency_at(mq.broker_name, start_ms).median_ms))


@dataclass(frozen=True)
class SendCheck:
    seq: int
    time_ms: int                         # the send's start, trace time
    observed: str                        # "broker-a/3" or "FAILED"
    predicted: str
    verdict: str


@dataclass
class Agreement:
    """Counts per verdict and every send that was not an agreement."""

    checks: list[SendCheck] = field(default_factory=list)
    inferred_routes: set[int] = field(default_factory=set)
    """The route versions (0: the first route, 1: after the first logged change, ...) whose
    counter start some send was ``INFERRED`` from: the client draws one start per version,
    and the check may need several sends to tell the starts apart (a broker avoided makes
    many starts pick alike), so inferred *sends* may outnumber the versions, these not."""
    copies: int | None = None
    """With the topic's dump read (``copies``): the copies stored beside the one each send
    ended at (an attempt answered with a status other than SEND_OK, or one the client gave up
    on after its broker had written it)."""
    copies_unexplained: list[tuple[int, str]] = field(default_factory=list)
    """(seq, ``broker/queue``) of each copy no attempt of the model went to."""

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.checks)

    @property
    def determined(self) -> int:
        """Sends whose inputs the recording determines: all but the inferred and in-flight."""
        return (len(self.checks) - self.count(INFERRED) - self.count(IN_FLIGHT)
                - self.count(RESET) - self.count(HIDDEN_RESET) - self.count(WORST_INFERRED)
                - self.count(WRITTEN_NOT_STORED) - self.count(REFUSED_BUSY)
                - self.count(ILLEGAL_QUEUE))

    @property
    def no_route(self) -> int:
        """Sends that failed, as the model's did, before the client had the topic's route (or
        found it only after the send's timeout)."""
        return sum(c.verdict == AGREE and c.predicted in (NO_ROUTE, LATE_ROUTE)
                   for c in self.checks)

    def summary(self) -> dict[str, Any]:
        return {"sends": len(self.checks), "agree": self.count(AGREE),
                "no_route": self.no_route,
                "determined": self.determined,
                "inferred": self.count(INFERRED) + self.count(WORST_INFERRED),
                "inferred_routes": len(self.inferred_routes),
                "reset": self.count(RESET) + self.count(HIDDEN_RESET),
                "in_flight": self.count(IN_FLIGHT),
                **({"written_not_stored": self.count(WRITTEN_NOT_STORED)}
                   if self.count(WRITTEN_NOT_STORED) else {}),
                **({"refused_busy": self.count(REFUSED_BUSY)}
                   if self.count(REFUSED_BUSY) else {}),
                **({"illegal_queue": self.count(ILLEGAL_QUEUE)}
                   if self.count(ILLEGAL_QUEUE) else {}),
                **({"copies": self.copies, "copies_unexplained": len(self.copies_unexplained)}
                   if self.copies is not None else {}),
                "unexplained": self.count(UNEXPLAINED)}

    def others(self) -> list[SendCheck]:
        return [c for c in self.checks
                if c.verdict != AGREE or c.predicted in (NO_ROUTE, LATE_ROUTE)]


def _label(queue: MessageQueue | None) -> str:
    return queue.short() if queue is not None else "FAILED"


class _Draw:
    """A stand-in for the client's ``Random``: the value a 5.x retry resets the counter to."""

    def __init__(self, value: int) -> None:
        self.value = value

    def randrange(self, n: int) -> int:
        return self.value % n


AS_LOGGED = verdicts.text("producer", "AS_LOGGED")
"""Not a verdict: with the client's log read whole (``logs_complete``), where several counter
starts or retry draws explain a send's queue, the check goes on from one whose failed attempts
(their brokers) are the ones the client logged while that send ran. Live on 5.3.3 (issue 34,
soak seed 4078893759), broker-b was isolated and broker-a paused: one draw sent straight to
broker-c, another failed at broker-a first (logged, ``RT`` 2,877 ms) and retried to broker-c.
Taking the first left broker-a available in the check and 63 later sends unexplained."""


def _failed_at(result: Any) -> list[str]:
    """The brokers of a send's failed attempts, sorted."""
    return sorted(a.queue.broker_name for a in result.attempts
                  if a.outcome is not Outcome.SEND_OK)


def _trial(strategy: MQFaultStrategy, tp: TopicPublishInfo, model: ObservedBrokers, now: int,
           start: int | None, draw: int, worst: int | None = None, lookup: int = 0
           ) -> tuple[MQFaultStrategy, TopicPublishInfo, Any]:
    """One send on copies of the producer's state: the counter at ``start`` (``None``: as it
    is), a retry's reset drawing ``draw``, the 4.x fault table's ``whichItemWorst`` at
    ``worst`` (``None``: as it is), after a route lookup of ``lookup`` ms (``send``)."""
    s2, tp2 = copy.deepcopy(strategy), copy.deepcopy(tp)
    if start is not None:
        tp2.index.stored = start
    if worst is not None and isinstance(s2.table, FaultTable4):
        s2.table.which_item_worst.stored = worst
    tp2.index._rng = _Draw(draw)          # type: ignore[assignment]  # randrange is enough
    config = SendConfig(mode=model.mode,
                        retry_another_broker_when_not_store_ok=model.retry_not_stored)
    return s2, tp2, send(s2, tp2, model, now, config, lookup_ms=lookup)


LOGGED_RT = verdicts.text("producer", "LOGGED_RT")
"""Not a verdict: how the check reports a logged failed attempt to the fault table. The client
calls ``updateFaultItem(broker, endTimestamp - beginTimestampPrev, true)`` with the very
``RT`` it logs (4.9.8 ``DefaultMQProducerImpl.sendDefaultImpl`` lines 595-612); the loop's
attempt begins at the send's time, a few ms before the client's, and ends when the logged one
ended, so its own duration is that much longer. ``pickOneAtLeast`` sorts the isolated items
by latency, then by the isolation's end: live, three brokers isolated after 8 ms each and
one after 215 ms; a 10 ms item would have moved a broker out of the better half."""


class _LoggedRT(dict):  # type: ignore[type-arg]
    """(broker, end) -> the ``RT`` the client logged for a failed attempt that ended then;
    shared, not copied, by the trials' deep copies (it never changes)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _LoggedRT:
        return self


ISOLATION_LOG_MS = 50
"""A successful attempt's report is the isolation its client logged (``<broker> will be
isolated for <N> ms.``, 5.1.4 on: ``LineRules.logs_isolation``) when that line's stamp is this
close to the attempt's end as the check dates it (the nearest; sends of one producer end at
least its interval, 100 ms live, apart)."""
SLOW_SEND_LOGGED = verdicts.text("producer", "SLOW_SEND_LOGGED")
"""Not a verdict: on a line that logs isolations (``LineRules.logs_isolation``) a successful
attempt's report isolates its broker exactly when its client logged so, for as long as it
logged, from the line's stamp. The latency the check has for an attempt (the trace's
``costTime``, or the driver's clock around the whole ``send``) is not the client's
``endTimestamp - beginTimestampPrev``, and a send of about 550 ms sits on the 5.x table's
edge: 549 ms isolates nothing, 550 ms isolates for 2 s. Live on 5.3.3 (issue 34's CI run,
soak seed 4078893759 on a loaded host) the check isolated a broker the client had not, and
every later send of the producer was one queue off (349 unexplained)."""


class _LoggedIsolations(dict):  # type: ignore[type-arg]
    """broker -> [(trace time, duration)] of the isolations a producer's client logged;
    shared, not copied, by the trials' deep copies."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _LoggedIsolations:
        return self


class _ReportedStrategy(MQFaultStrategy):
    """``MQFaultStrategy`` whose fault items hold the latency the client itself reported for
    a logged failed attempt (``LOGGED_RT``), and, where the client logs its isolations, whose
    successful attempts isolate as logged (``SLOW_SEND_LOGGED``)."""

    logged_rt: _LoggedRT
    isolations: _LoggedIsolations | None = None

    def update_fault_item(self, broker: str, latency_ms: int, isolation: bool, now_ms: int,
                          reachable: bool = True) -> None:
        rt = self.logged_rt.get((broker, now_ms)) if isolation else None
        if not isolation and self.isolations is not None:
            latency_ms, now_ms = self._as_logged(broker, latency_ms, now_ms)
        super().update_fault_item(broker, latency_ms if rt is None else rt, isolation, now_ms,
                                  reachable=reachable)

    def _as_logged(self, broker: str, latency_ms: int, now_ms: int) -> tuple[int, int]:
        """The latency and time of a successful attempt's report as its client logged it: the
        logged isolation's duration (the least latency that gives it) from the line's stamp,
        or no isolation when no line was logged (``SLOW_SEND_LOGGED``)."""
        assert self.isolations is not None
        failed = self._duration(self.isolation_latency)        # a failed attempt's lines
        near = [(abs(t - now_ms), t, d) for t, d in self.isolations.get(broker, ())
                if d != failed and abs(t - now_ms) <= ISOLATION_LOG_MS]
        if near:
            _, t, d = min(near)
            if self._duration(latency_ms) != d:
                latency_ms = min(m for m in self.latency_max if self._duration(m) == d)
            return latency_ms, t
        if self._duration(latency_ms) > 0:
            latency_ms = min(m for m in self.latency_max if self._duration(m) > 0) - 1
        return latency_ms, now_ms


def producer_agreement(truth: Sequence[dict[str, Any]], *, line: str, fault_tolerance: bool,
                       topic: str, route: TopicRoute, conditions: Conditions, origin_ms: int,
                       costs: dict[str, int],
                       route_changes: Sequence[RouteStep] = (),
                       failures: Sequence[tuple[int, str, int]
                                         | tuple[int, str, int, int | None]
                                         | tuple[int, str, int, int | None, int | None]] = (),
                       logs_complete: bool = False,
                       isolations: Sequence[tuple[int, str, int]] | None = None,
                       mode: SendMode = SendMode.SYNC,
                       stopped: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                       refused: Sequence[tuple[int, str]] = (),
                       copies: Mapping[int, Sequence[tuple[str, int]]] | None = None,
                       retry_not_stored: bool = False
                       ) -> Agreement:
    """Check one producer's ground truth (``truth``: rows of ``sends/<producer>.jsonl``, epoch
    times) against the package (see the module docstring). ``route_changes`` are the client's
    logged route changes: (trace time, new queue datas); the first is the route its first send
    fetched (logged just after that send began). ``failures`` are its logged failed attempts:
    (start, broker, ``RT``), trace time, the code of an ``MQBrokerException`` logged with it
    and the queue id the line names; an attempt of the loop at that queue that meets one
    takes its ``RT`` and its answer (``ObservedBrokers``), and the fault item it reports holds
    that ``RT`` (``LOGGED_RT``). ``isolations`` (``None``: its client does not log them) are
    the isolations its client logged, (trace time, broker, duration): a successful attempt
    isolates as logged (``SLOW_SEND_LOGGED``). With ``logs_complete``, a send explained by
    several counters or draws is explained by one whose failed attempts are the ones its client
    logged (``AS_LOGGED``). ``mode`` is how the application sent (``ONEWAY``: one attempt, the
    request's write; its rows then say where the topic's dump found each message, or
    ``lost``), and ``stopped`` each broker's stretches in which a oneway message could die
    unstored (``ordered_agreement.lost_spans``: from a kill, or the pause it was killed in, to
    the restart), which a oneway message no broker stored must have met, or been sent at most
    ``IN_BROKER_MS`` before (``WRITTEN_NOT_STORED``; ``None``: the trace's conditions say
    when brokers were down), or been refused by its broker as busy: ``refused`` are the busy
    replies its client read that matched no request, (trace time, broker), each explaining one
    such message (``REFUSED_BUSY``). A paused broker stores what it was sent when it resumes.
    ``route`` is the topic as its brokers hold it: a oneway message the model sends to a queue id
    its broker does not hold there was refused unanswered (``ILLEGAL_QUEUE``). ``copies``
    (a recording with slaves) are the queues the topic's dump found each send's message in:
    an attempt at one of them, not the last, was answered with a status other than SEND_OK
    (``STATUS_COPY``), and a copy no attempt of the model went to leaves its send unexplained;
    ``retry_not_stored`` is the producer's ``retryAnotherBrokerWhenNotStoreOK``."""
    reported = _ReportedStrategy(line, send_latency_fault_enable=fault_tolerance,
                                 worst_index_start=WORST_START)
    reported.logged_rt = _LoggedRT({(f[1], f[0] + f[2]): f[2] for f in failures})
    if isolations is not None:
        reported.isolations = _LoggedIsolations()
        for t, b, d in sorted(isolations):
            reported.isolations.setdefault(b, []).append((t, d))
    strategy: MQFaultStrategy = reported
    resets = strategy.line.rules.counter_resets_on_retry and fault_tolerance
    failed: dict[str, list[tuple[int, int] | tuple[int, int, int | None]
                           | tuple[int, int, int | None, int | None]]] = {}
    for f in sorted(failures, key=lambda f: f[:3]):
        failed.setdefault(f[1], []).append((f[0], f[2], f[3] if len(f) > 3 else None,
                                            f[4] if len(f) > 4 else None))
    model = ObservedBrokers(conditions, costs, failed=failed, logs_complete=logs_complete,
                            mode=mode, copies=copies, retry_not_stored=retry_not_stored)
    first = int(truth[0]["sent_ms"]) - origin_ms
    changes = sorted((route_step(c) for c in route_changes), key=lambda c: c[0])
    late_route_seq = lookup_seq = None
    lookup_wait = 0
    if not changes:
        changes = [(first, tuple(route.queue_datas), ())]
    elif changes[0][0] > first:
        # the first route is logged just after the send whose lookup fetched it began: in
        # force from that send on; a send before it found no route (issue 32: the name server
        # did not answer on a loaded host) and failed without an attempt, as the loop does
        # without a route
        began = [int(r["sent_ms"]) - origin_ms for r in truth]
        lookup = max(t for t in began if t <= changes[0][0])
        lookup_seq = max(r["seq"] for r, t in zip(truth, began, strict=True) if t == lookup)
        lookup_wait = changes[0][0] - lookup
        # the client logs the route, installs it and connects before the first attempt
        # begins: when that attempt failed, its logged start says when (FIRST_ATTEMPT_LOGGED)
        nxt = min((t for t in began if t > lookup), default=2**62)
        logged = [f[0] for f in failures
                  if changes[0][0] - FAILURE_MATCH_MS <= f[0] < min(
                      nxt, lookup + SendConfig().send_msg_timeout_ms)]
        if logged:
            lookup_wait = max(lookup_wait, min(logged) - lookup)
        # a stored send's budget began at least this much after the driver's clock (see
        # ``late`` below): live on 5.5.0, a first batch whose route was logged 3,314 ms after
        # the driver's clock was stored 3,684 ms after it (the batch was built, its classes
        # loaded, before sendDefaultImpl took its clock)
        row = next(r for r in truth if r["seq"] == lookup_seq)
        started_late = (max(0, int(row["cost_ms"]) - SendConfig().send_msg_timeout_ms + 1)
                        if "cost_ms" in row and "broker" in row else 0)
        if changes[0][0] - lookup - started_late > SendConfig().send_msg_timeout_ms:
            # the lookup itself outlasted the send's budget: sendDefaultImpl selects a queue,
            # then finds ``timeout < costTime`` and throws "sendDefaultImpl call timeout"
            # before any attempt (seen live on 5.x: the route came 3,039 ms after the send)
            late_route_seq = lookup_seq
        changes[0] = (lookup, changes[0][1], changes[0][2])
    flips = sorted({t for rows in conditions.down.values() for s, u, _ in rows for t in (s, u)})
    out = Agreement(copies=0 if copies is not None else None)
    alive: list[tuple[MQFaultStrategy, TopicPublishInfo, int | None]] = []
    tp: TopicPublishInfo | None = None
    pending, pending_verdict, reset_hidden = True, INFERRED, False
    began_at = [int(r["sent_ms"]) - origin_ms for r in truth]
    as_logged: list[list[str] | None] = [
        sorted(f[1] for f in failures
               if began_at[i] - FAILURE_MATCH_MS <= f[0] < (
                   began_at[i + 1] - FAILURE_MATCH_MS if i + 1 < len(truth) else 2**62))
        if logs_complete else None for i in range(len(truth))]
    route_version = -1                  # the first install makes it 0
    busy = sorted(refused)              # busy replies not yet matched to a lost message
    # the queue ids each broker holds for the topic (``msgCheck``: below the larger count)
    held = {q.broker_name: max(q.read_queue_nums, q.write_queue_nums) for q in route.queue_datas}
    for i, row in enumerate(truth):
        now = began_at[i]
        observed = (f"{row['broker']}/{row['queue']}" if "broker" in row
                    else LOST if row.get("lost") else "FAILED")
        # the send whose lookup fetched the first route spent the lookup from its budget: its
        # first attempt began when the route came (``send``'s ``lookup_ms``; live on 5.x, a
        # 2.7 s lookup left 300 ms, the attempt timed out and isolated its broker for 10 s)
        wait = lookup_wait if row["seq"] == lookup_seq else 0
        # a send stored after more than its timeout (the client's cost_ms, from before it
        # called send) began its budget later than the driver's clock: by at least that much
        # plus 1 ms, or the stored attempt would have timed out (live on 5.x: a send of
        # 3,033 ms, its route 2,980 ms after the driver's clock, stored in one attempt)
        late = (max(0, int(row["cost_ms"]) - SendConfig().send_msg_timeout_ms + 1)
                if "cost_ms" in row and "broker" in row else 0)
        at, wait = now + late, max(0, wait - late)
        model.msg_id, model.broker = row.get("msg_id"), row.get("broker")
        model.seq, model.queue, model.status = row["seq"], row.get("queue"), row.get("status")
        model.call_timeout = "sendDefaultImpl call timeout" in str(row.get("error", ""))
        spent = _SEND_FAILED.search(str(row.get("error", "")))
        model.within_deadline = spent is not None and int(spent["times"]) > 1 and \
            int(spent["cost"]) <= SendConfig().send_msg_timeout_ms
        model.send_end = now + int(row["cost_ms"]) if "cost_ms" in row else None
        model.oneway_ms = int(row.get("cost_ms", 0))
        while changes and changes[0][0] <= now:
            if (tp is not None and not pending
                    and now - changes[0][0] < LOG_BEFORE_INSTALL_MS
                    and _label(_trial(strategy, tp, model, at, None, 0,
                                      lookup=wait)[2].queue) == observed):
                break               # logged, not installed yet: this send used the old list
            route_version += 1
            _, datas, masterless = changes.pop(0)
            new_route = TopicRoute(datas, route.broker_datas).without_masters(masterless)
            tp = TopicPublishInfo(publish_queues(topic, new_route),
                                  new_route.sorted_queue_datas(), ThreadLocalIndex(line, stored=0))
            pending, pending_verdict, reset_hidden = True, INFERRED, False
            alive = []
        if tp is None or row["seq"] == late_route_seq:
            # no route yet, or found after the send's timeout: it fails before any attempt
            # (the counter's step it took is inferred at the next send, still pending)
            out.checks.append(SendCheck(row["seq"], now, observed,
                                        NO_ROUTE if tp is None else LATE_ROUTE,
                                        AGREE if observed == "FAILED" else UNEXPLAINED))
            continue
        if observed == LOST:
            # a oneway write the client made and no broker stored: its queue is not known;
            # the counter stepped as it is (an inference under way starts over)
            strategy, tp, result = _trial(strategy, tp, model, at, None, 0, lookup=wait)
            alive = []
            b = result.queue.broker_name if result.queue is not None else ""
            if result.queue is not None and result.queue.queue_id >= held.get(b, 2**31):
                # a queue its broker does not hold (the client's route was not the brokers':
                # the default topic's): refused, and a oneway request is answered with nothing
                out.checks.append(SendCheck(row["seq"], now, observed, _label(result.queue),
                                            ILLEGAL_QUEUE))
                continue
            down = (any(lo - IN_BROKER_MS <= at <= hi for lo, hi in stopped.get(b, ()))
                    if stopped is not None
                    else conditions.down_at(b, at + ATTEMPT_SLACK_MS) is not None)
            verdict = WRITTEN_NOT_STORED if down else UNEXPLAINED
            if not down:
                k = next((k for k, (t, rb) in enumerate(busy)
                          if rb == b and at <= t <= at + REFUSED_WITHIN_MS), None)
                if k is not None:
                    busy.pop(k)
                    verdict = REFUSED_BUSY
            out.checks.append(SendCheck(row["seq"], now, observed, _label(result.queue),
                                        verdict))
            continue
        n = len(tp.queues)
        if pending and pending_verdict == INFERRED and not (resets and n > 1):
            # the counter after a route change: every start the sends so far agree with is
            # kept until one is left (a broker avoided makes many starts pick alike: issue
            # 32's soak, the first send after broker-a's restart fit six of ten)
            bases = alive or [(strategy, tp, start) for start in range(n)]
            # the send that looked the route up: its stored attempt began after the route's
            # line by an unknown few ms (the list installed, the queue selected, the hooks
            # run), so the latency the fault table heard lies between the trace's costTime
            # and the send's end less that line. Both are kept until the sends tell them
            # apart, and the send that does counts as INFERRED (live on 4.9.8, random
            # scenario 119649337706935: a first send stored 563 ms after its route's line,
            # 368 ms by the trace; the client did not isolate the broker, which the 4.x table
            # does from 550 ms, and 265 sends were unexplained)
            ends: list[int | None] = [model.send_end]
            if (INFER_FIRST_LATENCY and not alive and wait and model.send_end is not None
                    and model.msg_id in model.costs and model.broker is not None):
                ends.append(None)
            trials, ended = [], []
            for end in ends:
                model.send_end = end
                for base in bases:
                    trials.append(_trial(base[0], base[1], model, at, base[2], 0, lookup=wait))
                    ended.append(end is None)
            model.send_end = ends[0]
            fits = [(tr, e) for tr, e in zip(trials, ended, strict=True)
                    if _label(tr[2].queue) == observed]
            # the dump's copies are attempts too (STATUS_COPY): a candidate whose attempts
            # miss one is not the counter (a failed send at one broker's queue fits many)
            fits = [f for f in fits if _covers(copies, row, f[0][2])] or fits
            if fits:
                # a send every candidate predicts alike is determined; one that tells them
                # apart is what the counter is inferred from
                told = len({_label(tr[2].queue) for tr in trials}) > 1
                kept: dict[tuple[int, bool], Any] = {}
                for tr, e in fits:        # counters a whole list apart choose alike from now on
                    kept.setdefault(((tr[1].index.stored or 0) % n, e), tr)
                fits_only = [tr for tr, _ in fits]
                alive = [(tr[0], tr[1], None) for tr in kept.values()] if len(kept) > 1 else []
                pending = bool(alive)
                strategy, tp, result = fits_only[0]
                out.checks.append(SendCheck(
                    row["seq"], now, observed, _label(result.queue),
                    _copies_went(out, copies, row, result, INFERRED if told else AGREE)))
                if told:
                    out.inferred_routes.add(route_version)
                continue
            if alive:                                  # none fits: go on from the first
                strategy, tp = alive[0][0], alive[0][1]
                alive, pending = [], False
        starts: list[int | None] = list(range(n)) if pending else [None]
        verdict, chosen, undetermined = UNEXPLAINED, None, False
        expected = as_logged[i]
        fallback: tuple[Any, bool, str] | None = None
        for start in starts:
            # a 5.x retry resets the counter to a random draw, even one that then stops for
            # the timeout before it sends: did the draw matter here?
            draws = [_trial(strategy, tp, model, at, start, d, lookup=wait)
                     for d in (range(n) if resets and n > 1 else [0])]
            drew = len({tr[1].index.stored for tr in draws}) > 1
            if not drew:
                draws = draws[:1]
            matches = [tr for tr in draws if _label(tr[2].queue) == observed]
            matches = [tr for tr in matches if _covers(copies, row, tr[2])] or matches
            if matches:
                # the one whose failed attempts are the ones the client logged (AS_LOGGED)
                good = [tr for tr in matches if expected is None or _failed_at(tr[2]) == expected]
                found = ((good or matches)[0], drew and len(matches) == n,
                         pending_verdict if pending else
                         RESET if drew and len(matches) < n else AGREE)
                if good or expected is None:
                    fallback = found
                    break
                fallback = fallback or found
        if fallback is not None:
            chosen, undetermined, verdict = fallback      # undetermined: the send hides the draw
        if chosen is None and reset_hidden:
            # an earlier retry's random draw left the counter where only this send shows it:
            # while a broker was avoided, draws a whole broker's queues apart chose alike. The
            # broker's isolation is dated from its failure's log line, stamped up to
            # ISOLATION_EDGE_MS after the client began it, so its end may come that much sooner
            for start in range(n):
                for when in (at, at + ISOLATION_EDGE_MS):
                    trial = _trial(strategy, tp, model, when, start, 0, lookup=wait)
                    if _label(trial[2].queue) == observed:
                        chosen, verdict, reset_hidden = trial, HIDDEN_RESET, False
                        break
                if chosen is not None:
                    break
        table = strategy.table
        if (chosen is None and fault_tolerance and isinstance(table, FaultTable4)
                and table.which_item_worst.stored == WORST_START):
            # pickOneAtLeast's own counter has not been used yet: its start is random upstream
            # (WORST_INFERRED); the send that first uses it shows it
            for start in starts:
                for w in range(WORST_STARTS):
                    trial = _trial(strategy, tp, model, at, start, 0, worst=w, lookup=wait)
                    if _label(trial[2].queue) == observed:
                        chosen, verdict = trial, WORST_INFERRED
                        break
                if chosen is not None:
                    break
        if chosen is None:                            # no counter explains it: step as it is
            chosen = _trial(strategy, tp, model, at, None, 0, lookup=wait)
            span = int(row.get("cost_ms", 3000))
            verdict = IN_FLIGHT if any(now - 5 <= t <= now + span + 5 for t in flips) \
                else UNEXPLAINED
        elif verdict != HIDDEN_RESET:
            pending = undetermined                    # infer the drawn counter from the next
            pending_verdict = RESET if undetermined else INFERRED
            if verdict == RESET:
                reset_hidden = True                   # the draw may show only later (once)
        strategy, tp, result = chosen
        verdict = _copies_went(out, copies, row, result, verdict)
        out.checks.append(SendCheck(row["seq"], now, observed, _label(result.queue), verdict))
        if verdict == INFERRED:
            out.inferred_routes.add(route_version)
    return out


COPIES_NARROW = True
"""Whether the dump's copies narrow the counter starts and draws a send is explained by (the
starts whose attempts went to every copy). Live on 4.9.8 (issue 45's soak, scenario
18137692835699, fixture ``slave-threads-4``): a thread's send failed at broker-d/3 (its
paused slave held the reply) while three other threads' sends failed at broker-d/0 at the same
moment; every start of the thread predicted a failure, the first at broker-d/0, and the copy at
broker-d/3 was left unexplained."""


def _covers(copies: Mapping[int, Sequence[tuple[str, int]]] | None, row: Mapping[str, Any],
            result: Any) -> bool:
    """Whether every copy of ``row``'s message beside the one it ended at is where one of
    ``result``'s attempts went (always, without the dump, or with ``COPIES_NARROW`` off)."""
    if copies is None or not COPIES_NARROW:
        return True
    went = {(a.queue.broker_name, a.queue.queue_id) for a in result.attempts}
    return all(c in went for c in copies.get(row["seq"], ())
               if c != (row.get("broker"), row.get("queue")))


def _copies_went(out: Agreement, copies: Mapping[int, Sequence[tuple[str, int]]] | None,
                 row: Mapping[str, Any], result: Any, verdict: str) -> str:
    """With the topic's dump read, count ``row``'s copies beside the one it ended at in ``out``;
    each must be where one of the model's attempts (``result``) went (``STATUS_COPY``), or the
    send is unexplained."""
    if copies is None or out.copies is None:
        return verdict
    went = {(a.queue.broker_name, a.queue.queue_id) for a in result.attempts}
    extra = [c for c in dict.fromkeys(copies.get(row["seq"], ()))
             if c != (row.get("broker"), row.get("queue"))]
    out.copies += len(extra)
    stray = [c for c in extra if c not in went]
    out.copies_unexplained += [(row["seq"], f"{b}/{q}") for b, q in stray]
    return UNEXPLAINED if stray else verdict


COARSE_MS = verdicts.number("allocation", "COARSE_MS")
"""A broker logs a member's removal (unregister, channel closed, expired) to the second, so the
check dates it at the second's start (``brokerlog.broker_view``); it came within the next
``COARSE_MS``. Live on 5.3.3 (issue 34's soak, seed 20261126, scenario 268876887016064), c2's
channel close was logged at 00:50:28 (c2 was killed at 28.87 s) and c1 rebalanced at 29.018
with c2 still counted: 1,018 ms after the second's start, 148 ms after the kill."""


def _coarse(t: int, event: str) -> bool:
    """Whether a change at trace time ``t`` is a removal dated to its log line's second (trace
    times count from a whole second)."""
    return event != "join" and t % 1000 == 0


class Membership:
    """A group's member lists over time, from membership rows (``membership.parquet``'s
    columns): a member is one connection; its ``client_id`` is what the strategy sees, so two
    connections with one client id appear twice (the duplicate client id trap)."""

    def __init__(self, columns: dict[str, list[Any]]) -> None:
        self.rows = sorted(zip(columns["time_ms"], columns["group"], columns["member"],
                               columns["client_id"], columns["event"], strict=True))

    def at(self, group: str, t: int) -> list[str]:
        """The sorted client ids of ``group`` after every change up to ``t`` (inclusive)."""
        cur: dict[str, str] = {}
        for tm, g, member, cid, event in self.rows:
            if tm > t:
                break
            if g == group:
                if event == "join":
                    cur[member] = cid
                else:
                    cur.pop(member, None)
        return sorted(cur.values())

    def near(self, group: str, t: int, slack_ms: int) -> list[list[str]]:
        """The list at ``t``, then the lists on either side of each change of ``group`` within
        ``slack_ms`` of ``t`` (the logs' timestamps are that coarse)."""
        out = [self.at(group, t)]
        for tm, g, _, _, event in self.rows:
            late = COARSE_MS if _coarse(tm, event) else 0     # it came within that second
            if g == group and tm - slack_ms <= t <= tm + late + slack_ms:
                for lst in (self.at(group, tm - 1), self.at(group, tm)):
                    if lst not in out:
                        out.append(lst)
        return out


class BrokerViews:
    """Each broker's own view of each group over time (``brokerlog.broker_view``, trace time):
    the client ids of the connections it held, one per connection (a client that reconnected
    while its old connection's close was not yet processed counts twice, as
    ``getConsumerIdListByGroup`` answers)."""

    def __init__(self, views: dict[str, Sequence[Any]], origin_ms: int = 0) -> None:
        self.changes = {b: sorted(((v.time_ms - origin_ms, i, v) for i, v in enumerate(rows)),
                                  key=lambda x: (x[0], x[1]))
                        for b, rows in views.items()}

    @property
    def brokers(self) -> list[str]:
        return sorted(self.changes)

    def _walk(self, broker: str, group: str) -> list[tuple[int, list[str]]]:
        """(time, the list from then on) after each change of ``group`` at ``broker``; changes
        in one millisecond (or one log second, for removals) each leave a state of their own:
        the broker answered from one of them, in the log's order."""
        return [(t, lst) for t, lst, _ in self._walk_events(broker, group)]

    def _walk_events(self, broker: str, group: str) -> list[tuple[int, list[str], str]]:
        held: dict[str, str] = {}
        out: list[tuple[int, list[str], str]] = []
        for t, _, v in self.changes.get(broker, ()):
            if v.group != group:
                continue
            if v.event == "join":
                held[v.channel] = v.client_id
            else:
                held.pop(v.channel, None)
            out.append((t, sorted(held.values()), v.event))   # each state, even in one ms
        return out

    def at(self, broker: str, group: str, t: int) -> list[str]:
        """The sorted client ids ``broker`` held for ``group`` at ``t`` (inclusive)."""
        cur: list[str] = []
        for tm, lst in self._walk(broker, group):
            if tm > t:
                break
            cur = lst
        return cur

    def near(self, broker: str, group: str, t: int, slack_ms: int) -> list[list[str]]:
        """Every list ``broker`` held for ``group`` within ``slack_ms`` of ``t`` (the list just
        before ``t - slack_ms``, then after each change up to ``t + slack_ms``): what it could have
        answered a client whose rebalance was logged at ``t``; each state of a millisecond
        counts. A removal dated by its log line's second (``_coarse``) may have come up to a
        second later: the list before it counts while that second reaches the window."""
        out = [self.at(broker, group, t - slack_ms - 1)]
        before: list[str] = []
        for tm, lst, event in self._walk_events(broker, group):
            if (_coarse(tm, event) and tm < t - slack_ms <= tm + COARSE_MS
                    and before not in out):
                out.append(before)
            if t - slack_ms <= tm <= t + slack_ms and lst not in out:
                out.append(lst)
            before = lst
        return out

    def disagreement(self, group: str, start: int, end: int,
                     down: Mapping[str, Sequence[tuple[int, int]]] | None = None
                     ) -> dict[str, Any]:
        """How often and how long the brokers held different lists of ``group`` between
        ``start`` and ``end`` (trace ms), leaving out a broker while it was down (``down``:
        per broker, [from, to) stretches: killed, not yet restarted): the stretches, their
        count, total and longest (seconds) and share of the span."""
        down = down or {}

        def up(b: str, t: int) -> bool:
            return not any(f <= t < u for f, u in down.get(b, ()))

        edges = {t for rows in down.values() for f, u in rows for t in (f, u)}
        times = sorted({tm for b in self.brokers for tm, _ in self._walk(b, group)}
                       | edges | {start, end})
        stretches: list[dict[str, Any]] = []
        open_: dict[str, Any] | None = None
        for t in (x for x in times if start <= x <= end):
            views = {b: self.at(b, group, t) for b in self.brokers if up(b, t)}
            differ = t < end and len({tuple(v) for v in views.values()}) > 1
            if differ:
                if open_ is None:
                    open_ = {"from_s": t / 1000, "most": {}}
                for b, v in views.items():
                    open_["most"][b] = max(open_["most"].get(b, 0), len(v))
            elif open_ is not None:
                open_["to_s"] = t / 1000
                open_["seconds"] = round(open_["to_s"] - open_["from_s"], 3)
                stretches.append(open_)
                open_ = None
        total = sum(x["seconds"] for x in stretches)
        return {"group": group, "stretches": len(stretches), "seconds": round(total, 3),
                "longest_s": max((x["seconds"] for x in stretches), default=0.0),
                "share": round(total / max(1e-9, (end - start) / 1000), 4),
                "detail": stretches}


@dataclass
class AllocationAgreement:
    exact: int = 0                    # the strategy on the list at the logged time
    near_change: int = 0              # on the list just before or after a change close to it
    stale_view: int = 0               # on a list one broker held then (``STALE_VIEW``)
    bad: list[tuple[Any, list[list[str]]]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"logged": self.exact + self.near_change + self.stale_view + len(self.bad),
                "exact": self.exact, "near_change": self.near_change,
                "stale_view": self.stale_view, "unexplained": len(self.bad)}


STALE_VIEW = verdicts.text("allocation", "STALE_VIEW")
"""A logged assignment is the strategy's split of a list that one broker held at that moment
(``BrokerViews.near``) but the group's imported membership never had then: the consumer asked
that broker (``findConsumerIdList`` asks one broker of the topic's route, at random) while the
brokers disagreed, e.g. a paused broker that still holds a consumer which left, or holds a
reconnected consumer twice (issue 32: ``cidAllSize=6`` and ``7`` for a group of five)."""


def allocation_agreement(rebalances: Sequence[Any], lists: Any, queues: Any,
                         strategy: str, allocator: Any = None) -> AllocationAgreement:
    """Check logged rebalances (``clientlog.Rebalance``) against ``strategy``: ``lists(r)`` gives
    the candidate member lists for ``r`` (the first: a broker's list at the logged time; then
    the lists either side of a membership change within the logs' precision; a candidate given
    as ``(STALE_VIEW, members)`` is one broker's own view). ``queues`` is the topic's queues, or
    ``queues(r)`` the queue sets the consumer could have had then (its route as it logged it);
    the logged ``mqAllSize`` and ``cidAllSize`` must match too. ``allocator`` (an object with
    the strategies' ``allocate``) replaces the Java ``strategy``: another client's (issue 47)."""
    from rocketlb_core.consumer.registry import make

    alloc = make(strategy) if allocator is None else allocator
    out = AllocationAgreement()
    for r in rebalances:
        candidates = lists(r)
        queue_sets = queues(r) if callable(queues) else [queues]
        found = None
        for i, cand in enumerate(candidates):
            kind, members = cand if isinstance(cand, tuple) else \
                ("exact" if i == 0 else "near_change", cand)
            for qs in queue_sets:
                if len(members) != r.cid_all_size or (callable(queues)
                                                      and len(qs) != r.mq_all_size):
                    continue
                want = alloc.allocate(r.group, r.client_id, sorted(qs), members) \
                    if r.client_id in members else []
                if sorted(want or ()) == sorted(r.result):
                    found = kind
                    break
            if found:
                break
        if found == "exact":
            out.exact += 1
        elif found == "near_change":
            out.near_change += 1
        elif found == STALE_VIEW:
            out.stale_view += 1
        else:
            out.bad.append((r, [c[1] if isinstance(c, tuple) else c for c in candidates]))
    return out


def _gap_detail(r: Any, candidates: list[list[str]],
                routes: Sequence[tuple[int, int, Sequence[QueueData]]], offset: int,
                origin: int) -> dict[str, Any]:
    """What a replay of an unexplained assignment needs to see (a CI run keeps only its
    output): the line, its trace time, what the consumer logged, every member list tried, and
    the consumer's route changes (trace ms, the readable queues' brokers) before it."""
    return {"line": r.line, "t_ms": stamp_ms(r.stamp, offset) - origin,
            "mq_all_size": r.mq_all_size, "cid_all_size": r.cid_all_size,
            "result": sorted(q.short() for q in r.result or ()),
            "tried": candidates,
            "routes": [{"line": ln, "t_ms": t,
                        "readable": sorted(f"{q.broker_name}:{q.read_queue_nums}"
                                           for q in qd if q.perm & PERM_READ)}
                       for ln, t, qd in routes if ln < r.line]}


def _client_log(recording: Path, process: str) -> Any:
    """A process's client log of a recording, parsed (it is stored gzip-compressed)."""
    import gzip
    import tempfile

    from rocketlb_core.trace.clientlog import read_client_log

    gz = recording / "logs" / process / "rocketmq_client.log.gz"
    with tempfile.TemporaryDirectory(prefix="rocketlb-log-") as tmp:
        path = Path(tmp) / process / "rocketmq_client.log"
        path.parent.mkdir()
        path.write_bytes(gzip.decompress(gz.read_bytes()))
        log = read_client_log(path)
    return log


ANSWERED = verdicts.text("producer", "ANSWERED")
"""Not a verdict: ``check_recording``'s reading of the imported conditions
(``_without_answered``)."""


def _without_answered(columns: dict[str, list[Any]],
                      failures: Sequence[tuple[int, str, int, int | None, int | None]]
                      ) -> dict[str, list[Any]]:
    """The imported conditions (``conditions.parquet``'s columns) without the outages that
    began at a failed attempt the broker answered (``ANSWERED``): the importer dates a
    broker ``down`` from any failed attempt at it, but an ``MQBrokerException`` (e.g. code 1,
    ``request queueId[3] is illegal``, a queue of the default route the topic does not have)
    came from a broker that was up. Such an outage starts instead at the first unanswered
    failure (no reply: a remoting error) at that broker before its ``up``, if any; else it is
    left out. ``failures``: every producer's logged failed attempts (start, broker, ``RT``,
    code, queue id), trace time."""
    from rocketlb_core.trace.importer import SILENT_RT_MS

    answered = {(f[0], f[1]) for f in failures if f[3] is not None}
    unanswered: dict[str, list[tuple[int, int]]] = {}
    for f in failures:
        if f[3] is None:
            unanswered.setdefault(f[1], []).append((f[0], f[2]))
    for rows in unanswered.values():
        rows.sort()
    n = len(columns["time_ms"])
    out = {k: list(v) for k, v in columns.items()}
    keep = [True] * n
    for i in range(n):
        t, b = columns["time_ms"][i], columns["broker"][i]
        if columns["kind"][i] != "down" or (t, b) not in answered:
            continue
        up = next((columns["time_ms"][j] for j in range(i + 1, n)
                   if columns["broker"][j] == b and columns["kind"][j] == "up"), 2**62)
        first = next(((s, rt) for s, rt in unanswered.get(b, ()) if t <= s < up), None)
        if first is None:
            keep[i] = False
        else:
            out["time_ms"][i] = first[0]
            out["mode"][i] = "silent" if first[1] >= SILENT_RT_MS else "clean"
    order = sorted((i for i in range(n) if keep[i]),
                   key=lambda i: (out["time_ms"][i], out["broker"][i]))
    return {k: [v[i] for i in order] for k, v in out.items()}


MAX_EPOCH_MS = 1 << 53
"""A time in a recording's rows (epoch ms) is below this (JSON's exact integers)."""
MAX_COST_MS = 10_000_000
"""A send's measured time is at most this (about 2.8 hours)."""
MAX_TEXT = 5_000
"""A text field of a send's row (a broker name, a message id, a key, an error) is at most
this long."""


def read_sends(path: Path, mode: str = "sync", threads: int = 1) -> list[dict[str, Any]]:
    """The rows of a remoting producer's ``sends/<producer>.jsonl.gz`` (``live/java/
    Produce.java``), each field checked: ``seq`` and ``sent_ms`` integers from 0, ``cost_ms``
    from 0 to ``MAX_COST_MS``, ``broker`` text with ``queue`` an integer from 0 to 65,535,
    ``status``, ``msg_id``, ``error`` and (mode ``hash``, required) ``key`` text up to
    ``MAX_TEXT`` characters, ``oneway`` true (mode ``oneway`` only), ``async`` true (mode
    ``async`` only, required) with its first hop (``ASYNC_FIRST``, all or none: ``executor``
    and ``first_broker`` text, ``first_queue`` a queue id, ``first_ms`` a time), ``batch`` an
    integer from 1 to ``MAX_BATCH`` (mode ``batch``, required, only), ``thread`` an integer below
    ``threads`` (required with several threads, absent with one); a row is stored (a broker
    and queue), failed (an error) or, oneway, a returned call. Anything else is a
    ``TraceError`` naming the file, the row and the field."""
    import json

    from rocketlb_core.trace.ordered_agreement import MAX_BATCH
    from rocketlb_core.trace.textfile import read_lines

    def whole(row: dict[str, Any], k: str, lo: int, hi: int, n: int) -> None:
        v = row[k]
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise TraceError(path, n, k, f"an integer from {lo} to {hi} expected, got {v!r}")

    rows = []
    for n, text in read_lines(path):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except (ValueError, RecursionError):
            raise TraceError(path, n, None, "not a JSON object") from None
        if not isinstance(row, dict):
            raise TraceError(path, n, None, "not a JSON object")
        for k in ("seq", "sent_ms"):
            if k not in row:
                raise TraceError(path, n, k, "missing")
        whole(row, "seq", 0, MAX_EPOCH_MS, n)
        whole(row, "sent_ms", 0, MAX_EPOCH_MS, n)
        if "cost_ms" in row:
            whole(row, "cost_ms", 0, MAX_COST_MS, n)
        for k in ("broker", "status", "msg_id", "error", "key"):
            if k in row and (not isinstance(row[k], str) or not 0 < len(row[k]) <= MAX_TEXT):
                raise TraceError(path, n, k, f"text of 1 to {MAX_TEXT} characters expected, "
                                 f"got {str(row[k])[:40]!r}")
        if ("broker" in row) != ("queue" in row):
            raise TraceError(path, n, "queue" if "broker" in row else "broker",
                             "a stored send names its broker and its queue")
        if "queue" in row:
            whole(row, "queue", 0, 65_535, n)
        if threads > 1:
            if "thread" not in row:
                raise TraceError(path, n, "thread", f"missing (a producer of {threads} "
                                 "threads names each send's)")
            whole(row, "thread", 0, threads - 1, n)
        elif "thread" in row:
            raise TraceError(path, n, "thread", "in a producer of one thread")
        if mode == "hash" and "key" not in row:
            raise TraceError(path, n, "key", "missing (an ordered producer's row has its key)")
        if mode == "batch":
            if "batch" not in row:
                raise TraceError(path, n, "batch", "missing (a batch producer's row has it)")
            whole(row, "batch", 1, MAX_BATCH, n)
        elif "batch" in row:
            raise TraceError(path, n, "batch", "in a batch producer's rows only")
        if "oneway" in row and (row["oneway"] is not True or mode != "oneway"):
            raise TraceError(path, n, "oneway", "true, in a oneway producer's rows only")
        if mode == "oneway" and "oneway" not in row:
            raise TraceError(path, n, "oneway", "missing (a oneway producer's row has it)")
        if mode != "oneway" and ("broker" in row) == ("error" in row):
            raise TraceError(path, n, "error", "a send is stored (broker, queue) or failed "
                             "(error), one of the two")
        if mode == "oneway" and "broker" in row:
            raise TraceError(path, n, "broker", "a oneway call's row names no queue")
        if "async" in row and (row["async"] is not True or mode != "async"):
            raise TraceError(path, n, "async", "true, in an async producer's rows only")
        if mode == "async" and "async" not in row:
            raise TraceError(path, n, "async", "missing (an async producer's row has it)")
        first = [k for k in ASYNC_FIRST if k in row]
        if first and mode != "async":
            raise TraceError(path, n, first[0], "in an async producer's rows only")
        if first and len(first) < len(ASYNC_FIRST):
            raise TraceError(path, n, next(k for k in ASYNC_FIRST if k not in row),
                             "missing (a first hop names its executor, broker, queue and time)")
        if first:
            for k in ("executor", "first_broker"):
                if not isinstance(row[k], str) or not 0 < len(row[k]) <= MAX_TEXT:
                    raise TraceError(path, n, k, f"text of 1 to {MAX_TEXT} characters "
                                     f"expected, got {str(row[k])[:40]!r}")
            whole(row, "first_queue", 0, 65_535, n)
            whole(row, "first_ms", 0, MAX_EPOCH_MS, n)
        rows.append(row)
    return rows


ASYNC_FIRST = ("executor", "first_broker", "first_queue", "first_ms")
"""An async send's first hop, as the driver's ``SendMessageHook`` saw it on the executor thread
(``live/java/Produce.java``): absent when the send failed before any hop."""


def recording_route(meta: Mapping[str, Any]) -> TopicRoute:
    """The topic's route as a live recording's ``recording.json`` (``meta``) read it from its
    brokers (``importer.recording_route``, which the broadcasting check shares)."""
    from rocketlb_core.trace.importer import recording_route as read_route

    route: TopicRoute = read_route(dict(meta))
    return route


def _oneway_stored(path: Path) -> dict[str, tuple[str, int]]:
    """Where the topic's dump (``live/java/DumpTopic.java``) found each oneway message: body
    ``<producer>/m<seq>`` -> (broker, queue)."""
    return {body: at[-1] for body, at in stored_copies(
        path, "a recording with a oneway producer has it").items()}


def copies_by_seq(stored: Mapping[str, Sequence[tuple[str, int]]],
                  producer: str) -> dict[int, list[tuple[str, int]]]:
    """``producer``'s copies in the topic's dump (``stored_copies``), by send seq."""
    prefix = f"{producer}/m"
    return {int(body[len(prefix):]): list(at) for body, at in stored.items()
            if body.startswith(prefix) and body[len(prefix):].isascii()
            and body[len(prefix):].isdigit() and len(body) - len(prefix) <= 18}


def stored_copies(path: Path, why: str = "a recording with slaves has it"
                  ) -> dict[str, list[tuple[str, int]]]:
    """Every queue the topic's dump (``live/java/DumpTopic.java``) found each named message in,
    in the dump's order: body ``<producer>/m<seq>`` -> [(broker, queue), ...] (a message a
    master wrote and answered with a status other than SEND_OK is there beside its retry's
    copy; issue 45). A row whose broker or queue is not one is a ``TraceError`` naming the
    file, the row and the field."""
    import json

    from rocketlb_core.trace.textfile import read_lines

    if not path.is_file():
        raise TraceError(path, None, None, f"missing ({why})")
    out: dict[str, list[tuple[str, int]]] = {}
    for n, text in read_lines(path):
        if not text.startswith("{"):
            continue
        try:
            x = json.loads(text)
        except (ValueError, RecursionError):
            raise TraceError(path, n, None, "not a JSON object") from None
        body = x.get("body") if isinstance(x, dict) else None
        if not isinstance(body, str) or "/m" not in body:
            continue
        broker, queue = x.get("broker"), x.get("queue")
        if not isinstance(broker, str) or not 0 < len(broker) <= MAX_TEXT:
            raise TraceError(path, n, "broker", f"a broker name expected, got {broker!r:.40}")
        if isinstance(queue, bool) or not isinstance(queue, int) or not 0 <= queue <= 65_535:
            raise TraceError(path, n, "queue", f"a queue id from 0 to 65535 expected, got "
                             f"{queue!r:.40}")
        out.setdefault(body, []).append((broker, queue))
    return out


def _where_stored(row: dict[str, Any], producer: str,
                  stored: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """A oneway send's row with where its message was stored (``broker``, ``queue``), or
    ``lost`` when its call returned and no broker stored it."""
    if "error" in row:
        return row
    at = stored.get(f"{producer}/m{row['seq']}")
    if at is None:
        return {**row, "lost": True}
    return {**row, "broker": at[0], "queue": at[1]}


MAX_THREADS = 16
"""A live producer's application threads at most (``live/java/Produce.java``'s THREADS; the
recorder's ``live.record.MAX_THREADS``)."""


def by_thread(truth: Sequence[dict[str, Any]],
              failures: Sequence[tuple[int, str, int, int | None, int | None, str]],
              threads: int, origin_ms: int
              ) -> list[tuple[list[dict[str, Any]], list[tuple[int, str, int, int | None,
                                                                  int | None]], bool]]:
    """A producer's sends and logged failed attempts, split by the application thread that
    made them (issue 45: ``threads`` threads ``send-0`` ... each with its own counter), each
    part with whether its failures are known to be its own and complete. A failure's thread
    is the one its line names (5.x clients log it); a 4.x line names none, so it goes to every
    thread with a send in progress when it began (from ``FAILURE_MATCH_MS`` before the send
    to its end, or to that thread's next send when it failed), and a failure that fits
    several threads leaves each of them incomplete (``logs_complete`` off). One thread: the
    sends and failures as they are (a failure's thread is not asked).

    >>> rows = [{"seq": 0, "sent_ms": 1000, "thread": 0, "cost_ms": 3010},
    ...         {"seq": 1, "sent_ms": 1020, "thread": 1, "cost_ms": 3},
    ...         {"seq": 3, "sent_ms": 1100, "thread": 1, "cost_ms": 2}]
    >>> fs = [(0, "broker-a", 3000, None, 2, "")]
    >>> def parts(fs):
    ...     return [([r["seq"] for r in rows], len(f), ok)
    ...             for rows, f, ok in by_thread(rows, fs, 2, 1000)]
    >>> parts(fs)
    [([0], 1, True), ([1, 3], 0, True)]

    A failure while both threads were sending fits both, and leaves each incomplete:

    >>> fs = [(25, "broker-a", 3, None, 2, "")]
    >>> rows[1]["cost_ms"] = 30
    >>> parts(fs)
    [([0], 1, False), ([1, 3], 1, False)]
    """
    strip = [f[:5] for f in failures]
    if threads == 1:
        return [(list(truth), strip, True)]
    parts: list[list[dict[str, Any]]] = [[] for _ in range(threads)]
    for r in truth:
        parts[int(r["thread"])].append(r)
    spans: list[list[tuple[int, int]]] = []
    for rows in parts:
        rows.sort(key=lambda r: (int(r["sent_ms"]), int(r["seq"])))
        began = [int(r["sent_ms"]) - origin_ms for r in rows]
        spans.append([(b - FAILURE_MATCH_MS,
                       b + int(r["cost_ms"]) if "cost_ms" in r
                       else (began[k + 1] if k + 1 < len(rows) else 2**62))
                      for k, (r, b) in enumerate(zip(rows, began, strict=True))])
    mine: list[list[tuple[int, str, int, int | None, int | None]]] = [[] for _ in parts]
    shared = [False] * threads
    for f, short in zip(failures, strip, strict=True):
        named = f[5][5:] if f[5].startswith("send-") else ""
        if named.isdigit() and int(named) < threads:
            owners = [int(named)]
        else:
            owners = [t for t in range(threads)
                      if any(lo <= f[0] <= hi for lo, hi in spans[t])]
        for t in owners:
            mine[t].append(short)
            shared[t] = shared[t] or len(owners) > 1
    return [(rows, mine[t], not shared[t]) for t, rows in enumerate(parts) if rows]


def check_recording(recording: Path | str, trace: Path | str,
                    slack_ms: int = 1000, *, split_threads: bool = True) -> dict[str, Any]:
    """The model against one live recording (``rocketlb_core.live.record``) and the trace
    imported from it (``importer.import_recording``): per producer, ``producer_agreement``
    (its route changes from its client log); per consumer, ``allocation_agreement`` of every
    assignment it logged for the topic, on the imported membership (lists within
    ``slack_ms`` of a change: the brokers log leaves and crashes to the second), on the
    queues of the consumer's own logged route, then on each broker's own view. Returns the
    summaries, every send and assignment that did not agree, what each consumer held when
    the scenario ended (before the recorder shut the consumers down), how often and how long
    the brokers' views of each group disagreed (``brokers_disagree``) and the route's changes
    as the name server logged them (``nameserver_route``). A producer of several application
    threads is checked thread by thread (``by_thread``), each with its own counter; with
    ``split_threads`` off, as one thread's sends (the model of an application that sends from
    one thread, which such a recording refutes); ``threads_sharing_failures`` counts its
    threads checked with failed attempts that fit another thread too (``logs_complete`` off:
    a 4.9.8 client's log names no thread)."""
    import json

    import pyarrow.parquet as pq

    from rocketlb_core.trace.importer import log_offset, origin_ms
    from rocketlb_core.trace.msgtrace import read_msgtrace, with_logged
    from rocketlb_core.trace.ordered_agreement import (
        SEND_MODES,
        lost_spans,
        ordered_agreement,
        stopped_spans,
    )

    recording, trace = Path(recording), Path(trace)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    # a recording through the Proxy may hold remoting clients beside gRPC ones (issue 47): the
    # gRPC clients have their own checks (live.check), the remoting ones are checked here
    meta = {**meta, **{side: [x for x in meta[side] if x.get("client", "remoting") != "grpc"]
                       for side in ("producers", "consumers")}}
    origin = origin_ms(json.loads((trace / "trace.json").read_text(encoding="utf-8")))
    line, topic = meta["client_version"], meta["topic"]
    offset = log_offset(line, int(meta.get("utc_offset_minutes", 0)))
    route = recording_route(meta)
    out: dict[str, Any] = {"line": line, "producers": {}, "consumers": {},
                           "nameserver_route": nameserver_route(recording, origin)}
    go = [p for p in meta["producers"] if p.get("language") == "go"]
    for p in go:
        # the Go client's producer (issue 47): its own model, from its rows alone
        from rocketlb_core.trace.go_agreement import go_producer_agreement

        g = go_producer_agreement(
            read_sends(recording / "sends" / f"{p['name']}.jsonl.gz"), topic=topic,
            route_rows=[[q["broker_name"], q["read_queue_nums"], q["write_queue_nums"],
                         q["perm"]] for q in meta["route"]],
            origin_ms=origin, paused=stopped_spans(meta["events"], origin, ("pause",)),
            killed=stopped_spans(meta["events"], origin, ("kill",)))
        gs = g.summary()
        # the Java producers' fields, so one table reads both: ``agree`` counts every send the
        # model explained (``first_attempt`` stored at once, ``retried``, ``failed``)
        out["producers"][p["name"]] = {
            "sends": gs["sends"], "agree": gs["agree"] + gs["retried"] + gs["failed"],
            "first_attempt": gs["agree"], "retried": gs["retried"], "failed": gs["failed"],
            "inferred": 0, "reset": 0, "in_flight": 0, "route_changes": 0,
            "unexplained": gs["unexplained"], "language": "go", "order": g.order,
            "others": g.unexplained}
    meta = {**meta, "producers": [p for p in meta["producers"] if p not in go]}
    logs = {p["name"]: _client_log(recording, p["name"]) for p in meta["producers"]}
    all_failures = {name: [(stamp_ms(f.stamp, offset) - origin - f.rt_ms, f.queue.broker_name,
                            f.rt_ms, f.response_code, f.queue.queue_id, f.thread)
                           for f in log.send_failures if f.queue.topic == topic]
                    for name, log in logs.items()}
    if meta["producers"]:
        conditions = Conditions.from_columns(_without_answered(
            pq.read_table(trace / "conditions.parquet").to_pydict(),
            [f[:5] for fs in all_failures.values() for f in fs]))
        # with the records the producers' trace dispatchers failed to send (``with_logged``)
        costs = {p.msg_id: p.cost_ms for p in with_logged(
            read_msgtrace(recording / "msgtrace.jsonl.gz"), logs).pubs}
    stored = (_oneway_stored(recording / "topic.jsonl.gz")
              if any(p.get("mode") == "oneway" for p in meta["producers"]) else {})
    # a recording with slaves (issue 45): every copy of each message the topic's dump holds
    slaved = "slaves" in meta
    all_copies = stored_copies(recording / "topic.jsonl.gz") if slaved else {}
    for i, p in enumerate(meta["producers"]):
        mode = p.get("mode", "sync")
        if mode not in SEND_MODES:
            raise TraceError(recording / "recording.json", None, f"producers[{i}].mode",
                             f"one of {', '.join(SEND_MODES)} expected, got {mode!r:.40}")
        threads = p.get("threads", 1)
        if isinstance(threads, bool) or not isinstance(threads, int) \
                or not 1 <= threads <= MAX_THREADS or (threads > 1 and p["fault_tolerance"]):
            raise TraceError(recording / "recording.json", None, f"producers[{i}].threads",
                             f"1 to {MAX_THREADS} (more than 1 with fault_tolerance off) "
                             f"expected, got {threads!r:.40}")
        truth = read_sends(recording / "sends" / f"{p['name']}.jsonl.gz", mode, threads)
        log = logs[p["name"]]
        changes = [(stamp_ms(r.stamp, offset) - origin, r.queue_datas, r.masterless)
                   for r in log.route_changes if r.topic == topic]
        if mode == "hash":

            o = ordered_agreement(truth, line=line, topic=topic, route=route,
                                  route_changes=changes, origin_ms=origin,
                                  stopped=stopped_spans(meta["events"], origin))
            out["producers"][p["name"]] = {**o.summary(), "mode": mode,
                                           "route_changes": len(changes),
                                           "fault_tolerance": p["fault_tolerance"],
                                           "others": [vars(c) for c in o.others()]}
            continue
        if mode == "async":
            from rocketlb_core.trace.async_agreement import async_agreement

            y = async_agreement(truth, line=line, topic=topic, route=route,
                                route_changes=changes, origin_ms=origin,
                                stopped=stopped_spans(meta["events"], origin),
                                killed=stopped_spans(meta["events"], origin, ("kill",)),
                                back_pressure=int(p.get("back_pressure", 0)))
            out["producers"][p["name"]] = {**y.summary(), "mode": mode,
                                           "route_changes": len(changes),
                                           "fault_tolerance": p["fault_tolerance"],
                                           "others": [vars(c) for c in y.others()]}
            continue
        if mode == "oneway":
            truth = [_where_stored(r, p["name"], stored) for r in truth]
        failures = all_failures[p["name"]]
        names = {b["address"]: b["name"] for b in meta["brokers"]}
        refused = [(stamp_ms(r.stamp, offset) - origin, names[r.address])
                   for r in log.unmatched_replies
                   if r.code == SYSTEM_BUSY and r.address in names] if mode == "oneway" else []
        # the live driver sends from its main thread (live/java/Produce.java); the trace
        # dispatcher's producer reports from its callbacks' threads
        isolations = ([(stamp_ms(x.stamp, offset) - origin, x.broker, x.duration_ms)
                       for x in log.isolations if x.thread == "main"]
                      if ProducerLine.parse(line).rules.logs_isolation else None)
        a = Agreement()
        split = threads if split_threads else 1
        sharing = 0
        for rows, mine, complete in by_thread(truth, failures, split, origin):
            sharing += not complete
            # each application thread has its own counter (ThreadLocalIndex): its sends are
            # one loop's, with the failures its own (issue 45)
            part = producer_agreement(
                rows, line=line, fault_tolerance=p["fault_tolerance"], topic=topic,
                route=route, conditions=conditions, origin_ms=origin, costs=costs,
                route_changes=changes, failures=mine, logs_complete=complete,
                isolations=isolations,
                mode=SendMode.ONEWAY if mode == "oneway" else SendMode.SYNC,
                stopped=lost_spans(meta["events"], origin), refused=refused,
                copies=copies_by_seq(all_copies, p["name"]) if slaved else None,
                retry_not_stored=p.get("retry_not_stored", False) is True)
            a.checks += part.checks
            if part.copies is not None:
                a.copies = (a.copies or 0) + part.copies
                a.copies_unexplained += part.copies_unexplained
            a.inferred_routes |= part.inferred_routes
        a.checks.sort(key=lambda c: c.seq)
        out["producers"][p["name"]] = {**a.summary(), "route_changes": len(changes),
                                       **({"mode": mode} if mode != "sync" else {}),
                                       **({"threads": threads,
                                           "threads_sharing_failures": sharing}
                                          if split > 1 else {}),
                                       "fault_tolerance": p["fault_tolerance"],
                                       **({"retry_not_stored": True}
                                          if p.get("retry_not_stored") is True else {}),
                                       **({"copies_unexplained_at": a.copies_unexplained}
                                          if a.copies_unexplained else {}),
                                       "others": [vars(c) for c in a.others()]}
    if meta["consumers"]:
        # no broker logged a member (every consumer's start() failed: 5.x then shuts the
        # client down, seen in issue 32's soak on a loaded host): no assignment to explain
        members = Membership(pq.read_table(trace / "membership.parquet").to_pydict()
                             if (trace / "membership.parquet").is_file() else
                             {"time_ms": [], "group": [], "member": [], "client_id": [],
                              "event": []})
        gone = {"leave": "left", "crash": "killed", "freeze": "frozen"}   # the scenario's
        ends = [x["wall_ms"] for x in meta.get("snapshots", []) if x["before"] == "end"]
        end_ms = ends[-1] if ends else 2**62          # before the clean shutdown began
        views, starts = _broker_views(recording, origin)
        down = _down_stretches(meta, origin, starts)
        groups = sorted({k["group"] for k in meta["consumers"]})
        from rocketlb_core.trace.broadcast_agreement import check_broadcast

        broadcast = check_broadcast(recording)       # {} when no member broadcasts
        for k in meta["consumers"]:
            state = next((gone[e["action"]] for e in reversed(meta["events"])
                          if e["target"] == k["name"] and e["action"] in gone), "running")
            if k["name"] in broadcast:
                # a broadcasting member allocates nothing: its own check (issue 45)
                out["consumers"][k["name"]] = {
                    **broadcast[k["name"]], "at_end": state, "logged": 0, "exact": 0,
                    "near_change": 0, "stale_view": 0, "held_at_end": [],
                    "unexplained_lines": [], "unexplained_detail": []}
                continue
            if k.get("rebalance") == "broker":
                # a broker computes its queues (issue 45, pop): its own check
                out["consumers"][k["name"]] = _broker_assigned(
                    recording, k, meta, state, members, views, down, route, offset, origin,
                    slack_ms, topic, end_ms, out["nameserver_route"])
                continue
            allocator = None
            if k.get("language") == "go":
                # the Go client's log and strategy (issue 47): its share of the same lists
                from rocketlb_core.goclient.allocate import LIVE_STRATEGIES, JavaView
                from rocketlb_core.trace.golog import LOG_NAME, read_go_log

                strategy = k.get("strategy", "AVG")
                log = read_go_log(recording / "logs" / k["name"] / f"{LOG_NAME}.gz",
                                  utc_offset_minutes=offset, strategy=strategy)
                allocator = JavaView(LIVE_STRATEGIES[strategy])
            else:
                log = _client_log(recording, k["name"])
            logged = [r for r in log.rebalances if r.topic == topic]
            if allocator is None:
                strategy = logged[0].strategy if logged else "AVG"
            routes = [(c.line, stamp_ms(c.stamp, offset) - origin, c.queue_datas)
                      for c in log.route_changes if c.topic == topic]
            queue_sets = (_queue_sets(routes, route, topic, offset, origin, slack_ms)
                          if routes or allocator is None else
                          _nameserver_queue_sets(out["nameserver_route"], route, topic, offset,
                                                 origin, slack_ms))
            a2 = allocation_agreement(
                logged, _candidates(members, views, down, routes, route, offset, origin,
                                    slack_ms),
                queue_sets, strategy, allocator)
            held = [r for r in logged if stamp_ms(r.stamp, offset) <= end_ms]
            out["consumers"][k["name"]] = {
                **a2.summary(), "group": k["group"], "at_end": state,
                **({"language": "go", "strategy": strategy}
                   if k.get("language") == "go" else {}),
                "route_changes": len(routes),
                "members_counted": sorted({r.cid_all_size for r in logged}),
                "held_at_end": sorted(q.short() for q in held[-1].result or ())
                if held and state == "running" else [],
                "unexplained_lines": [r.line for r, _ in a2.bad],
                "unexplained_detail": [_gap_detail(r, cands, routes, offset, origin)
                                       for r, cands in a2.bad]}
            if k.get("assign"):
                # a lite-pull consumer that assigned itself its queues (issue 45): no
                # rebalance to check; it reads its own queues, and nothing else
                from rocketlb_core.trace.broadcast_agreement import read_ranges

                path = recording / "ranges" / f"{k['name']}.json"
                read = sorted(read_ranges(path)) if path.is_file() else []
                outside = [q for q in read if q not in k["assign"]]
                entry = out["consumers"][k["name"]]
                entry.update({"assigned": list(k["assign"]), "read": read,
                              "read_outside": len(outside),
                              "unexplained": entry["unexplained"] + len(outside)})
        out["groups_at_end"] = groups_at_end(out["consumers"], meta, route, recording)
        by_broker = sorted({k["group"] for k in meta["consumers"]
                            if k.get("rebalance") == "broker"})
        if by_broker:
            from rocketlb_core.trace.pop_agreement import group_consumption

            out["groups"] = {g: group_consumption(recording, g, [
                k["name"] for k in meta["consumers"] if k["group"] == g]) for g in by_broker}
        from rocketlb_core.trace.lock_agreement import check_orderly

        for orderly, locks in check_orderly(recording).items():
            # an orderly clustering group (issue 45): its brokers' locks and who consumed what
            out.setdefault("groups", {})[orderly] = {k: v for k, v in locks.items()
                                                     if k != "timeline"}
        stop = min(end_ms, 2**62) - origin
        out["brokers_disagree"] = {}
        for g in groups:
            joined = [t for b in views.brokers for t, lst in views._walk(b, g) if lst]
            if joined and views.brokers:
                out["brokers_disagree"][g] = views.disagreement(g, min(joined),
                                                                max(stop, min(joined)), down)
    return out


def _broker_assigned(recording: Path, k: Mapping[str, Any], meta: Mapping[str, Any],
                     state: str, members: Membership, views: BrokerViews,
                     down: dict[str, list[tuple[int, int]]], route: TopicRoute, offset: int,
                     origin: int, slack_ms: int, topic: str, end_ms: int,
                     ns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A consumer whose queues a broker computes (``rebalance = "broker"``), checked by
    ``pop_agreement.broker_agreement`` on the candidates of the other consumers' check, with
    its group's request mode from the recording (``consume_modes``); ``held_at_end``: its last
    answer logged before the scenario ended (``end_ms``, epoch ms), as ``broker/queue:MODE``."""
    from rocketlb_core.trace.pop_agreement import (
        ROUTE_POLL_MS,
        broker_agreement,
        read_broker_rebalances,
    )

    log = _client_log(recording, k["name"])
    routes = [(c.line, stamp_ms(c.stamp, offset) - origin, c.queue_datas)
              for c in log.route_changes if c.topic == topic]
    logged = [r for r in read_broker_rebalances(
        recording / "logs" / k["name"] / "rocketmq_client.log.gz") if r.topic == topic]
    mode = next((m for m in meta.get("consume_modes", []) if m["group"] == k["group"]), None)
    def readable(datas: Sequence[QueueData]) -> list[MessageQueue]:
        return sorted(MessageQueue(topic, q.broker_name, i) for q in datas
                      if q.perm & PERM_READ for i in range(q.read_queue_nums))

    listed = _nameserver_queue_sets(ns, route, topic, offset, origin, slack_ms)

    def queue_sets(r: Any) -> list[list[MessageQueue]]:
        # the routes the client logged in force within a route poll either side of the
        # answer (the broker's cache polls the same name server on its own clock, and may be
        # ahead of the client's or behind it), the recording's route first; then the brokers
        # the name server listed within a poll before it (a broker killed and back within a
        # poll changes no route the client logs)
        t = stamp_ms(r.stamp, offset) - origin
        out = [readable(route.queue_datas)]
        out += [qs for qs in listed(r) if qs not in out]
        for j, (_, at, datas) in enumerate(routes):
            until = routes[j + 1][1] if j + 1 < len(routes) else 2**62
            if at <= t + ROUTE_POLL_MS + slack_ms and until >= t - ROUTE_POLL_MS - slack_ms \
                    and readable(datas) not in out:
                out.append(readable(datas))
        return out

    b = broker_agreement(logged, _candidates(members, views, down, routes, route, offset,
                                             origin, slack_ms), queue_sets,
                         mode["mode"] if mode else None, mode["pop_share"] if mode else None)
    held = [r for r in logged if stamp_ms(r.stamp, offset) <= end_ms]
    return {**b.summary(), "group": k["group"], "at_end": state, "rebalance": "broker",
            "mode": mode["mode"] if mode else "PULL",
            "assignments": [[r.stamp, [f"{q[0]}/{q[1]}:{q[2]}" for q in r.assignment]]
                            for r in logged],
            "held_at_end": [f"{q[0]}/{q[1]}:{q[2]}" for q in held[-1].assignment]
            if held and state == "running" else [],
            "unexplained_lines": [r.line for r, _ in b.bad],
            "unexplained_detail": [{"line": r.line, "stamp": r.stamp,
                                    "assignment": list(r.assignment), "lists": c[:4]}
                                   for r, c in b.bad[:20]]}


def groups_at_end(consumers: Mapping[str, Any], meta: Mapping[str, Any], route: TopicRoute,
                  recording: Path) -> dict[str, Any]:
    """Each clustering group's queues when the scenario ended (issue 47): the members still
    running, the topic's readable queues ``held_twice`` (by two members or more, from each
    one's last logged share) and ``held_by_nobody``, and ``read_twice``: reads of the group's
    members beyond one per offset in the whole recording (from their ``ranges``: a queue held
    twice, or the handover of a rebalance, whose last messages the next owner reads again).
    A group with a broadcasting or assign-mode member is left out (it owns no share)."""
    from rocketlb_core.trace.broadcast_agreement import read_ranges

    readable = sorted(f"{q.broker_name}/{i}" for q in route.queue_datas
                      if q.perm & PERM_READ for i in range(q.read_queue_nums))
    out: dict[str, Any] = {}
    for g in sorted({k["group"] for k in meta["consumers"]}):
        members = [k for k in meta["consumers"] if k["group"] == g]
        if any(k.get("model") == "broadcasting" or k.get("assign") or k.get("client") == "grpc"
               or k.get("rebalance") == "broker" for k in members):
            continue
        running = [k["name"] for k in members
                   if consumers.get(k["name"], {}).get("at_end") == "running"]
        holders: dict[str, list[str]] = {}
        for name in running:
            for q in consumers[name].get("held_at_end", []):
                holders.setdefault(q, []).append(name)
        reads: dict[str, list[tuple[int, int, int]]] = {}
        for k in members:
            path = recording / "ranges" / f"{k['name']}.json"
            for q, span in (read_ranges(path).items() if path.is_file() else ()):
                reads.setdefault(q, []).append(span)
        # the members' reads of a queue beyond the offsets from the first to the last any of
        # them read: exact when together they read every offset between (a gap would hide as
        # many repeats), a floor otherwise
        twice = sum(max(0, sum(n for _, _, n in rs) - (max(b for _, b, _ in rs)
                                                       - min(a for a, _, _ in rs) + 1))
                    for rs in reads.values())
        out[g] = {"running": running,
                  "held_twice": sorted(q for q, hs in holders.items() if len(hs) > 1),
                  "held_by_nobody": sorted(q for q in readable if q not in holders)
                  if running else [],
                  "read_twice": twice}
    return out


_NS_EVENTS = (
    ("register", re.compile(r"new broker registered, (?:BrokerIdentityInfo \[clusterName=[^,]*, "
                            r"brokerAddr=)?(?P<addr>[^\s\]]+)")),
    ("unregister", re.compile(r"remove brokerAddr\[\d+, (?P<addr>[^\]]+)\] "
                              r"from brokerAddrTable", re.ASCII)),
    ("unregister", re.compile(r"unregisterBroker, remove addr from brokerAddrTable OK, "
                              r"BrokerIdentityInfo \[clusterName=[^,]*, "
                              r"brokerAddr=(?P<addr>[^\]]+)")),
    ("expired", re.compile(r"The broker channel expired, (?P<addr>\S+)")),
)


def nameserver_route(recording: Path | str, origin: int = 0) -> list[dict[str, Any]]:
    """The route's changes as the name server logged them (any ``logs/namesrv/*.log.gz``):
    a broker's first registration (``new broker registered``), its removal when its channel
    closed (4.9.7 ``remove brokerAddr[...]``, 5.3.3 ``unregisterBroker, remove addr``) or
    expired (``The broker channel expired``); broker names from the recording's layout, times
    in trace seconds (the lines are stamped to the second, GMT+8)."""
    import gzip
    import json

    from rocketlb_core.trace.clientlog import GMT8_MINUTES

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    names = {b["address"]: b["name"] for b in meta["brokers"]}
    out: list[tuple[int, str, str]] = []
    for gz in sorted((recording / "logs" / "namesrv").glob("*.log.gz")):
        for text in gzip.decompress(gz.read_bytes()).decode("utf-8", "replace").splitlines():
            for event, rx in _NS_EVENTS:
                m = rx.search(text)
                if m is not None and m["addr"] in names and text[:19].count(":") == 2:
                    t = stamp_ms(text[:19] + ".000", GMT8_MINUTES)
                    out.append((t - origin, names[m["addr"]], event))
                    break
    return [{"t_s": t / 1000, "broker": b, "event": e} for t, b, e in sorted(set(out))]


def _broker_views(recording: Path, origin: int) -> tuple[BrokerViews, dict[str, list[int]]]:
    """Each broker's own view of the groups, from its log in the recording, and when each
    broker process started (epoch ms, to the second: the log's ``rocketmqHome=`` lines)."""
    from rocketlb_core.trace.brokerlog import broker_view, read_broker_log
    from rocketlb_core.trace.clientlog import GMT8_MINUTES

    logs = {p.parent.name: read_broker_log(p)
            for p in sorted((recording / "logs").glob("broker-*/broker.log.gz"))}
    starts = {b: [stamp_ms(stamp + ".000", GMT8_MINUTES) for _, stamp in log.starts]
              for b, log in logs.items()}
    return BrokerViews({b: broker_view(log) for b, log in logs.items()}, origin), starts


def _down_stretches(meta: dict[str, Any], origin: int,
                    starts: Mapping[str, Sequence[int]] = {}) -> dict[str, list[tuple[int, int]]]:
    """Per broker, when the scenario had it killed (trace ms): from the kill to its restart
    (or for good). The restart ends at its new process's first log line when the broker's log
    shows one (``starts``: epoch ms per broker), else when the recorder saw the broker back
    (``done_ms``: its registration listed by the name server, which may come seconds after
    the broker answered its clients: ``RESTART_ANSWERS``)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for e in meta["events"]:
        if e["action"] == "kill" and str(e["target"]).startswith("broker"):
            back = next((x["done_ms"] for x in meta["events"] if x["action"] == "restart"
                         and x["target"] == e["target"] and x["wall_ms"] > e["wall_ms"]),
                        2**62 + origin)
            began = [t for t in starts.get(e["target"], ()) if t > e["wall_ms"]]
            if began:
                back = min(back, began[0])
            out.setdefault(e["target"], []).append((e["wall_ms"] - origin, back - origin))
    return out


def _route_at(routes: Sequence[tuple[int, int, Sequence[QueueData]]], r: Any, offset: int,
              origin: int, slack_ms: int) -> list[Sequence[QueueData]]:
    """The routes a consumer could have rebalanced ``r`` on: the last one its log states
    before ``r``'s line, and the one before it when that change was logged within
    ``slack_ms`` of ``r`` (the rebalance read its queues, then asked a broker for the ids)."""
    before = [x for x in routes if x[0] < r.line]
    if not before:
        return []
    t = stamp_ms(r.stamp, offset) - origin
    out = [before[-1][2]]
    if len(before) > 1 and t - before[-1][1] <= slack_ms:
        out.append(before[-2][2])
    return out


def _queue_sets(routes: Sequence[tuple[int, int, Sequence[QueueData]]], route: TopicRoute,
                topic: str, offset: int, origin: int, slack_ms: int) -> Any:
    """``queues(r)`` for ``allocation_agreement``: the readable queues of each route the
    consumer could have had (``topicRouteData2TopicSubscribeInfo``), the recording's route
    when its log states none."""
    def sets(r: Any) -> list[list[MessageQueue]]:
        datas = _route_at(routes, r, offset, origin, slack_ms) or [route.queue_datas]
        return [sorted(MessageQueue(topic, q.broker_name, i) for q in qd
                       if q.perm & PERM_READ for i in range(q.read_queue_nums)) for qd in datas]
    return sets


GO_ROUTE_POLL_MS = 30_000
"""The Go client refreshes its routes every 30 s (``PollNameServerInterval``), and logs none of
them: ``_nameserver_queue_sets`` takes the name server's instead."""


def _nameserver_queue_sets(ns: Sequence[Mapping[str, Any]], route: TopicRoute, topic: str,
                           offset: int, origin: int, slack_ms: int) -> Any:
    """``queues(r)`` for a consumer whose log states no route (the Go client's, issue 47): the
    readable queues of the recording's route's brokers the name server listed at some moment
    within a route poll (``GO_ROUTE_POLL_MS``) before ``r`` (``nameserver_route``: a broker
    registered, and not since removed), the whole route first."""
    datas = [q for q in route.queue_datas if q.perm & PERM_READ]
    changes = sorted((round(x["t_s"] * 1000), x["broker"], x["event"]) for x in ns)

    def listed_at(t: int) -> frozenset[str]:
        up: set[str] = set()
        for at, broker, event in changes:
            if at > t:
                break
            (up.add if event == "register" else up.discard)(broker)
        return frozenset(up)

    def sets(r: Any) -> list[list[MessageQueue]]:
        t = stamp_ms(r.stamp, offset) - origin
        moments = [t - GO_ROUTE_POLL_MS - slack_ms, t + slack_ms]
        moments += [at for at, _, _ in changes if moments[0] <= at <= moments[1]]
        out = [sorted(MessageQueue(topic, q.broker_name, i) for q in datas
                      for i in range(q.read_queue_nums))]
        for listed in dict.fromkeys(listed_at(m) for m in sorted(moments)):
            qs = sorted(MessageQueue(topic, q.broker_name, i) for q in datas
                        if q.broker_name in listed for i in range(q.read_queue_nums))
            if qs and qs not in out:
                out.append(qs)
        return out
    return sets


def _candidates(members: Membership, views: BrokerViews,
                down: dict[str, list[tuple[int, int]]],
                routes: Sequence[tuple[int, int, Sequence[QueueData]]], route: TopicRoute,
                offset: int, origin: int, slack_ms: int) -> Any:
    """``lists(r)`` for ``allocation_agreement``: the imported membership's lists (at the
    logged time, then either side of a change within ``slack_ms``), then each list a broker of
    the consumer's route that was not down held within ``slack_ms`` (``STALE_VIEW``)."""
    def lists(r: Any) -> list[Any]:
        t = stamp_ms(r.stamp, offset) - origin
        out: list[Any] = list(members.near(r.group, t, slack_ms))
        asked = {q.broker_name for qd in (_route_at(routes, r, offset, origin, slack_ms)
                                          or [route.queue_datas]) for q in qd}
        for b in views.brokers:
            if b in asked and not any(f <= t < u for f, u in down.get(b, ())):
                out += [(STALE_VIEW, lst) for lst in views.near(b, r.group, t, slack_ms)
                        if lst not in out]
        return out
    return lists


def kill_handover(recording: Path | str, trace: Path | str) -> list[dict[str, Any]]:
    """How fast a real group took over a killed consumer's queues (the recording's ``crash``
    events: SIGKILL on a live host). Per kill, in seconds after it: when the broker dropped the
    consumer (the imported membership's ``kill``), and when a survivor logged the assignment
    that gives it the killed consumer's last queues."""
    import json

    import pyarrow.parquet as pq

    from rocketlb_core.trace.importer import log_offset, origin_ms

    recording, trace = Path(recording), Path(trace)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    origin = origin_ms(json.loads((trace / "trace.json").read_text(encoding="utf-8")))
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    members = pq.read_table(trace / "membership.parquet").to_pydict()
    groups = {k["name"]: k["group"] for k in meta["consumers"]}
    logs = {k["name"]: [r for r in _client_log(recording, k["name"]).rebalances
                        if r.topic == meta["topic"]] for k in meta["consumers"]}
    out = []
    for e in meta["events"]:
        if e["action"] != "crash":
            continue
        name, killed_ms = e["target"], e["wall_ms"]
        cid = f"127.0.0.1@{next(k['instance'] for k in meta['consumers'] if k['name'] == name)}"
        dropped = [t + origin for t, c, ev in zip(members["time_ms"], members["client_id"],
                                                  members["event"], strict=True)
                   if c == cid and ev == "kill" and t + origin >= killed_ms - 1000]
        held = [r for r in logs[name] if stamp_ms(r.stamp, offset) <= killed_ms]
        lost = set(held[-1].result or ()) if held else set()
        taken = [stamp_ms(r.stamp, offset) for n, rs in logs.items()
                 if n != name and groups[n] == groups[name] for r in rs
                 if stamp_ms(r.stamp, offset) >= killed_ms and lost <= set(r.result or ())]
        out.append({"consumer": name, "queues": len(lost),
                    "dropped_s": (min(dropped) - killed_ms) / 1000 if dropped else None,
                    "taken_over_s": (min(taken) - killed_ms) / 1000 if taken else None})
    return out


SIM_EVENTS = {"pause": ("broker_pause", None), "kill": ("broker_crash", "clean"),
              "restart": ("broker_restart", None)}
"""How a live scenario's broker events read in the simulator: a pause lasts until the next
``resume`` of that broker (requests wait and are answered then); a killed broker refuses at once
until it is up again (its ``restart`` counts from when the recorder saw it booted and
registered)."""


def simulator_scenario(recording: Path | str, producer: str) -> str:
    """A simulator scenario (TOML text) of one producer of a live recording: the same cluster
    and topic, the producer's rate and switch, and the broker events at the times they
    happened (seconds after the producers started)."""
    import json

    meta = json.loads((Path(recording) / "recording.json").read_text(encoding="utf-8"))
    p = next(x for x in meta["producers"] if x["name"] == producer)
    t0 = meta["t0_ms"]
    run_ms = p["count"] * max(1, p["interval_ms"]) + 2_000
    brokers = ", ".join(f'{{ name = "{b["name"]}" }}' for b in meta["brokers"])
    names = ", ".join(f'"{b["name"]}"' for b in meta["brokers"])
    queues = {q["read_queue_nums"] for q in meta["route"]}.pop()
    lines = [f'name = "live-{meta["scenario"]}-{meta["line"]}-{producer}"',
             f"duration_ms = {run_ms}", "drain_ms = 0", f'line = "{meta["client_version"]}"',
             "[cluster]", "name_servers = 1", f"brokers = [{brokers}]",
             f'topics = [{{ name = "{meta["topic"]}", brokers = [{names}], '
             f"read_queues = {queues}, write_queues = {queues} }}]",
             "[[producers]]", f'name = "{producer}"', f'topic = "{meta["topic"]}"',
             f"rate_per_s = {1000 / max(1, p['interval_ms']):g}",
             f"fault_tolerance = {str(p['fault_tolerance']).lower()}"]
    for e in meta["events"]:
        if e["action"] not in SIM_EVENTS:
            continue
        kind, mode = SIM_EVENTS[e["action"]]
        at = (e["done_ms"] if e["action"] == "restart" else e["wall_ms"]) - t0
        lines += ["[[events]]", f"at_ms = {at}", f'kind = "{kind}"',
                  f'broker = "{e["target"]}"'] + ([f'mode = "{mode}"'] if mode else [])
        if e["action"] == "pause":
            # until the resume, or just before the broker's next event (issue 32: paused,
            # then killed: the pause's end must not restart it after the kill)
            nxt = next((x for x in meta["events"]
                        if x["target"] == e["target"] and x["wall_ms"] > e["wall_ms"]), None)
            resume = t0 + run_ms if nxt is None else \
                nxt["wall_ms"] - (nxt["action"] != "resume")
            lines.append(f"duration_ms = {max(1, resume - e['wall_ms'])}")
    return "\n".join(lines) + "\n"


def producer_failures(recording: Path | str, seeds: Sequence[int] = range(5)
                      ) -> list[dict[str, Any]]:
    """Per producer of a live recording: the sends that failed on the real cluster, and what
    the simulator predicts for the same scenario (``simulator_scenario``) over ``seeds``
    (its counters start at seeded random values, as upstream's do)."""
    import gzip
    import json

    from rocketlb_core.sim.scenario import loads
    from rocketlb_core.sim.world import run_scenario

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    out = []
    for p in meta["producers"]:
        rows = [json.loads(x) for x in gzip.decompress(
            (recording / "sends" / f"{p['name']}.jsonl.gz").read_bytes()).splitlines()]
        scenario = loads(simulator_scenario(recording, p["name"]), f"{recording}:{p['name']}")
        sim = [run_scenario(scenario, seed).summary["messages_failed"] for seed in seeds]
        out.append({"producer": p["name"], "fault_tolerance": p["fault_tolerance"],
                    "live_failed": sum("error" in r for r in rows),
                    "simulated_failed_min": min(sim), "simulated_failed_max": max(sim)})
    return out


FREEZE_SLACK_MS = 2_000
"""How far a frozen consumer's drop may lie from the model's moment: broker log lines are
stamped to the second, and the model's last traffic (a pull answered once a message arrives) is
taken at the freeze."""


def frozen_drops(recording: Path | str, *, idle_close: bool = True) -> list[dict[str, Any]]:
    """How each broker dropped each consumer the scenario froze (``freeze``: SIGSTOP, a host
    gone quiet with its connections open; issue 45), held to the simulator's model
    (``sim.cluster``): the **idle close** comes 120 s after the connection's last traffic
    either way (on a broker whose queues it pulled, its last pull, at the freeze: the topic
    flows, so the held pulls are answered within a second; on another broker its last
    heartbeat or member-list query, between its last heartbeat and the freeze) and notifies
    the group; the **scan** comes at the first 10 s tick after its last heartbeat is 120 s
    old, and notifies nobody; whichever comes first. Per (consumer, broker): the path the
    broker logged (``trace.brokerlog``: the IDLE line of ``remoting.log`` or ``broker.log``
    beside a ``remove not active channel``, or ``SCAN: remove expired channel``), the drop's
    delay after the freeze, the last heartbeat the broker held (the idle close's line carries
    it; a scan's line does not, and then only the path is tested, not the time), whether it
    pulled that broker's queues of the scenario's topic (a retry queue it held there is not
    counted: live, c2 of ``frozen-consumers-5`` held ``%RETRY%GID_frozen`` on broker-b), and
    ``agree`` or ``unexplained`` with why.
    ``idle_close=False`` holds it to a model with the scan only, as this book's simulator was
    before issue 45: every idle close is then unexplained."""
    import json

    from rocketlb_core.conditions import CHANNEL_EXPIRY_MS, CHANNEL_SCAN_MS, IDLE_CLOSE_MS
    from rocketlb_core.trace.brokerlog import read_broker_log
    from rocketlb_core.trace.clientlog import GMT8_MINUTES
    from rocketlb_core.trace.importer import log_offset

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    instance = {k["name"]: k.get("instance") or k["name"] for k in meta["consumers"]}
    logs = {p.parent.name: read_broker_log(p)
            for p in sorted((recording / "logs").glob("broker-*/broker.log.gz"))}
    out = []
    for e in meta["events"]:
        if e["action"] != "freeze":
            continue
        name, frozen_ms = e["target"], int(e["wall_ms"])
        cid = f"127.0.0.1@{instance[name]}"
        log = _client_log(recording, name)
        held = [r for r in log.rebalances
                if r.topic == meta["topic"] and stamp_ms(r.stamp, offset) <= frozen_ms]
        pulled = {q.broker_name for q in (held[-1].result or ())} if held else set()
        beats = [ev.heartbeat_ms for b in logs.values() for ev in b.events
                 if ev.client_id == cid and ev.heartbeat_ms is not None]
        for broker, blog in logs.items():
            drops = [ev for ev in blog.events if ev.client_id == cid and ev.event != "join"]
            row: dict[str, Any] = {"consumer": name, "broker": broker,
                                   "pulled_here": broker in pulled}
            if not drops:
                out.append({**row, "path": None, "verdict": "unexplained",
                            "why": "the broker never dropped it"})
                continue
            ev = drops[0]
            # a broker's log: GMT+8 (logback_broker.xml), as the importer reads it
            at = stamp_ms((ev.stamp if len(ev.stamp) > 19 else ev.stamp + ".000")
                          .replace(",", "."), GMT8_MINUTES)
            heartbeat = ev.heartbeat_ms if ev.heartbeat_ms is not None else (
                max(beats) if beats else None)
            path = "idle close" if ev.idle else "scan" if ev.event == "crash" else ev.event
            row.update(path=path, dropped_after_s=round((at - frozen_ms) / 1000, 3),
                       heartbeat_before_s=(None if heartbeat is None
                                           else round((frozen_ms - heartbeat) / 1000, 3)))
            why = ""
            if path == "idle close" and not idle_close:
                why = "the model has no idle close"
            elif path == "idle close":
                if broker in pulled:
                    if abs(at - (frozen_ms + IDLE_CLOSE_MS)) > FREEZE_SLACK_MS:
                        why = "not 120 s after its last pull (the freeze)"
                elif heartbeat is None or not (heartbeat - FREEZE_SLACK_MS <= at - IDLE_CLOSE_MS
                                               <= frozen_ms + FREEZE_SLACK_MS):
                    why = "not 120 s after a request between its last heartbeat and the freeze"
                if not why and heartbeat is not None and \
                        at > heartbeat + CHANNEL_EXPIRY_MS + CHANNEL_SCAN_MS + FREEZE_SLACK_MS:
                    why = "after the scan must have dropped it (its heartbeat over 130 s old)"
            elif path == "scan":
                if heartbeat is not None and not (
                        CHANNEL_EXPIRY_MS - FREEZE_SLACK_MS < at - heartbeat
                        <= CHANNEL_EXPIRY_MS + CHANNEL_SCAN_MS + FREEZE_SLACK_MS):
                    why = "not at the first 10 s tick after its heartbeat was 120 s old"
                elif broker in pulled and at > frozen_ms + IDLE_CLOSE_MS + FREEZE_SLACK_MS:
                    why = "after the idle close should have dropped it (120 s after the freeze)"
            else:
                why = f"dropped as a {path}, not a vanished host"
            out.append({**row, "verdict": "unexplained" if why else "agree", "why": why})
    return out


def _offset(value: Any, path: Path, field: str) -> int:
    """A queue id or offset of a recording's JSON: an integer from 0 to 2^63 - 1, else a
    ``TraceError`` naming the file and the field."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise TraceError(path, None, field, f"expected an integer from 0 to 2^63 - 1, got "
                         f"{value!r}"[:200])
    return value


HUNG_SLACK = 100
"""How far behind the queue's end the consumer's last consumed offset may be at its stop: the
recorder lets the consumer run ``settle_s`` after the last send, so it has been handed all."""


def hung_listener(recording: Path | str, *, span_stop: bool = False) -> list[dict[str, Any]]:
    """Span flow control against a real consumer whose listener hung (the recording's ``hang``
    events; issue 45): per hang, the hung message's queue and offset, the highest offset of
    that queue the consumer was handed by its stop (``consumed/``), and the queue's broker
    offset and committed consumer offset at the final snapshot, before any consumer stopped
    (``progress/``, ``mqadmin consumerProgress``). The simulator's model (``sim.clients.
    Consumer.pull``, a ``slow_message``): the queue is consumed on to its end, however far past
    the hung message, and the committed offset stays at the hung message (``ProcessQueue.
    removeMessage`` returns the lowest offset still held); ``agree`` when both hold. With the
    hung message at offset 0, as in ``hung-listener-5``, ``consumerProgress`` shows 0 also
    for a queue never committed (5.3.3), so the committed offset is tested only for a hang at
    a later offset; hang after some consumption to test it.
    ``span_stop=True`` holds it to the model this book's simulator had before issue 45, which
    stopped pulling the queue ``consumeConcurrentlyMaxSpan`` (2000) offsets past the hung
    message: a queue consumed past that is then unexplained."""
    import json

    from rocketlb_core.doctor.inputs import _Bad, read_progress
    from rocketlb_core.sim.events import CONSUME_MAX_SPAN

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    groups = {k["name"]: k["group"] for k in meta["consumers"]}
    out = []
    for e in meta["events"]:
        if e["action"] != "hang":
            continue
        name = e["target"]
        hung_path = recording / "hung" / f"{name}.json"
        seen_path = recording / "consumed" / f"{name}.json"
        hung = json.loads(hung_path.read_text(encoding="utf-8"))
        seen = json.loads(seen_path.read_text(encoding="utf-8"))
        if not isinstance(hung, dict) or not isinstance(seen, dict):
            raise TraceError(hung_path, None, None, "expected a JSON object (Consume.java's)")
        for key in ("queue", "offset"):
            _offset(hung.get(key), hung_path, key)
        if not isinstance(hung.get("broker"), str):
            raise TraceError(hung_path, None, "broker", f"expected a name, got "
                             f"{hung.get('broker')!r}")
        queue = f"{hung['broker']}/{hung['queue']}"
        if queue in seen:
            _offset(seen[queue], seen_path, queue)
        progress = read_progress(recording / "progress" / f"{groups[name]}.txt", _Bad(False, []))
        row = next((r for r in progress.rows if r.broker == hung["broker"]
                    and r.queue_id == int(hung["queue"]) and r.topic == meta["topic"]), None)
        offset, consumed = int(hung["offset"]), int(seen.get(queue, -1))
        result: dict[str, Any] = {
            "consumer": name, "queue": queue, "hung_offset": offset,
            "consumed_to": consumed, "past_the_hung": consumed - offset,
            "broker_offset": None if row is None else row.broker_offset,
            "committed": None if row is None else row.consumer_offset}
        why = ""
        if row is None:
            why = "the queue is not in consumerProgress"
        elif row.consumer_offset != offset:
            why = "the committed offset is not the hung message's"
        elif span_stop and consumed > offset + CONSUME_MAX_SPAN:
            why = f"consumed past the hung message + {CONSUME_MAX_SPAN}"
        elif not span_stop and consumed < row.broker_offset - 1 - HUNG_SLACK:
            why = "not consumed on to the queue's end"
        out.append({**result, "verdict": "unexplained" if why else "agree", "why": why})
    return out
