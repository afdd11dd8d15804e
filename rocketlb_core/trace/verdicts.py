"""The live agreement checks' verdicts, in one registry (issue 50): what each check writes for a
send, an assignment, an attempt or a call, what it counts it as, and the named readings it
makes of a recording ("not a verdict": how it reads a log or a trace), each with the upstream
behaviour behind it and the tests and fixtures that show it. The book's page
``book/guide/verdicts.md`` is generated from ``VERDICTS`` (``rocketlb_core.docs_cli``).

The checks' own modules take their constants from here (``text``, ``number``):
``trace.agreement``'s ``AGREE``, ``INFERRED``, ... and ``trace.ordered_agreement``'s; the gRPC
checks write their verdicts as words (``"agree"``, ``"reload"``), which are registered under
the name ``python -m rocketlb_core.live check`` prints them by (``client.agree``,
``proxy.reload``). ``tests/test_verdicts.py`` holds the registry and the checks' code to each
other: every constant and every word a check writes where a verdict goes is registered, every
registered one is in its module, and each counts where the registry says.

Standard library only.

>>> text("producer", "INFERRED")
'counter inferred after a route change'
>>> [v.name for v in of_check("ordered")][:2]
['AGREE', 'ROUTE_NOT_INSTALLED']
"""

from __future__ import annotations

from dataclasses import dataclass

VERDICT = "verdict"
"""A value a check writes for a send, an assignment, an attempt or a call, and counts."""
LABEL = "label"
"""What a row's observed or predicted column says instead of a queue."""
READING = "reading"
"""Not a verdict: how the check reads the recording (a log, the trace's conditions)."""
KINDS = (VERDICT, LABEL, READING)


@dataclass(frozen=True)
class Check:
    """One check of the model against a recording: where it lives and how it reports."""

    key: str
    title: str
    module: str                 # the module whose code writes the verdicts
    functions: tuple[str, ...]  # the functions of ``module`` that check
    reports: str                # where its counts appear


@dataclass(frozen=True)
class Verdict:
    """One verdict, label or reading of a check.

    ``name``: the constant's name in the check's module (``AGREE``), or, for a word the code
    writes itself, the count ``live check`` prints (``client.agree``) or the summary's key
    (``exact``); ``value``: the constant's value, or the word. ``counted_as``: the summary key
    that counts it (``None``: a reading, counted nowhere). ``explains``: what it explains;
    ``upstream``: the upstream behaviour behind it, with the spec section (``spec 2.4``, of
    ``rocketmq-load-balancing.md``) or the fact of ``book/facts.toml`` (``fact ID``);
    ``shown_by``: the tests (``tests/FILE.py::FUNCTION``) and fixtures (a folder) that show it.
    """

    check: str
    name: str
    value: str | int
    kind: str
    counted_as: str | None
    explains: str
    upstream: str
    shown_by: tuple[str, ...]


CHECKS = (
    Check("producer", "A remoting producer's sends", "rocketlb_core.trace.agreement",
          ("producer_agreement",),
          "`live check`: `producer NAME: sends N, agree N, ...`; `check_recording`: "
          "`producers`, each send not agreeing in `others`"),
    Check("allocation", "A remoting consumer's logged assignments",
          "rocketlb_core.trace.agreement", ("allocation_agreement",),
          "`live check`: `consumer NAME: logged N, exact N, ...`; `check_recording`: "
          "`consumers`"),
    Check("ordered", "An ordered producer's sends (`mode = \"hash\"`)",
          "rocketlb_core.trace.ordered_agreement", ("ordered_agreement",),
          "`live check`: `producer NAME: ..., stored_at_key_queue N, ...`"),
    Check("async", "An async producer's sends (`mode = \"async\"`)",
          "rocketlb_core.trace.async_agreement", ("async_agreement",),
          "`live check`: `producer NAME: ..., retry_elsewhere N, ...`"),
    Check("grpc-client", "A gRPC producer's own choice of queue (Java and Python clients)",
          "rocketlb_core.trace.grpc_agreement",
          ("grpc_producer_agreement", "python_producer_agreement"),
          "`live check`: `producer NAME: ..., client.agree N, ...`"),
    Check("grpc-proxy", "The Proxy's queue for each attempt of a gRPC send",
          "rocketlb_core.trace.grpc_agreement", ("grpc_producer_agreement",
                                                 "python_producer_agreement"),
          "`live check`: `producer NAME: ..., proxy.agree N, ...`"),
    Check("grpc-attempt", "Each gRPC attempt's outcome", "rocketlb_core.trace.grpc_agreement",
          ("grpc_producer_agreement", "python_producer_agreement"),
          "`live check`: `producer NAME: ..., attempt_outcomes.ok N, ...`"),
    Check("grpc-simple", "A gRPC simple consumer's calls",
          "rocketlb_core.trace.grpc_consumer_agreement", ("simple_consumer_agreement",),
          "`live check`: `consumer NAME: ..., verdicts.agree N, ...`"),
    Check("broadcast", "A broadcasting group's members (concurrently and orderly)",
          "rocketlb_core.trace.broadcast_agreement", ("broadcast_agreement",),
          "`live check`: `consumer NAME: items N, agree N, lock_held N, ...`"),
    Check("orderly-locks", "An orderly clustering group's queue locks and consumption",
          "rocketlb_core.trace.lock_agreement", ("orderly_agreement",),
          "`live check`: `group NAME: items N, grant_free N, refused_held N, held N, ...`; "
          "`check_recording`: `groups`, each item not agreeing in `others`"),
    Check("broker-assignment", "A remoting consumer's queues as a broker answered them",
          "rocketlb_core.trace.pop_agreement", ("broker_agreement",),
          "`live check`: `consumer NAME: logged N, exact N, ...` of a consumer with "
          "`rebalance = \"broker\"`; `check_recording`: `consumers`"),
    Check("go-producer", "The Go client's producer's sends (rocketmq-client-go 2.1.2)",
          "rocketlb_core.trace.go_agreement", ("go_producer_agreement",),
          "`live check`: `producer NAME: ..., first_attempt N, retried N, failed N, ...`; "
          "`check_recording`: `producers`, each send not agreeing in `others`"),
    Check("consumer-model", "A frozen consumer's drop, a hung listener's queue",
          "rocketlb_core.trace.agreement", ("frozen_drops", "hung_listener"),
          "each row's `verdict` and `why`"),
)
"""The checks, in the page's order."""

_ORDERLY_TEST = ("tests/test_live_orderly.py::"
                 "test_every_lock_and_run_of_the_orderly_groups_is_explained")

_BROADCAST_EXPLAINED = ("tests/test_consumer_broadcast.py::"
                        "test_every_broadcasting_member_is_explained",
                        "data/live/broadcasting-4", "data/live/broadcasting-5",
                        "data/live/broadcasting-5.5")
"""What shows a broadcasting verdict every recording holds: the check on the three recordings."""
_BROADCAST_FAILS = ("tests/test_consumer_broadcast.py::"
                    "test_the_check_fails_what_the_model_does_not_say",)
"""What shows the broadcasting verdicts the check gives only when the model is changed."""

VERDICTS: tuple[Verdict, ...] = (
    # ------------------------------------------------------------------ the send loop
    Verdict(
        "producer", "AGREE", "agrees", VERDICT, "agree",
        "The package's send loop, run at the send's recorded time on the brokers as the "
        "recording observed them, ended at the queue where the real client stored the "
        "message, or failed where the real send failed.",
        "`sendDefaultImpl`'s loop and the line's queue selection (spec 2.4, 2.5, 2.6)",
        ("tests/test_live_recordings.py::"
         "test_the_package_predicts_every_determined_send_of_the_real_producers",
         "data/live/producer-outage-4", "data/live/producer-outage-5",
         "data/live/producer-outage-5.5")),
    Verdict(
        "producer", "INFERRED", "counter inferred after a route change", VERDICT, "inferred",
        "A send that tells apart the round-robin counter's possible starts after a route "
        "change (or the first route): every start the sends so far agree with is kept until "
        "one is left, and the sends that decide count as inferred, not as agreement. The "
        "first route's first send also leaves the latency its stored attempt reported between "
        "two bounds (`INFER_FIRST_LATENCY`), kept the same way.",
        "a new publish list gets a new counter whose random start no log states (spec 2.1; "
        "facts producer.counter-starts-random, producer.counter-per-topic-new-on-route-change)",
        ("tests/test_avoided_restart_agreement.py::"
         "test_starts_that_pick_alike_are_kept_until_the_sends_tell_them_apart",
         "tests/fixtures/live/avoided-restart-4",
         "tests/test_attempt_timing_agreement.py::"
         "test_the_first_sends_latency_lies_between_the_trace_and_the_clients_end",
         "tests/fixtures/live/first-latency-4")),
    Verdict(
        "producer", "RESET", "counter reset at random by a retry (5.x, fault tolerance on)",
        VERDICT, "reset",
        "A send whose queue depends on the random value a retry reset the counter to: its own "
        "retry's draw, or an earlier send's draw it is the first to show (that send hid it: "
        "every draw gave its queue).",
        "`resetIndex` on a sync retry with `sendLatencyFaultEnable` on (spec 2.5; facts "
        "producer.retry-resets-index-with-fault-strategy-since-5.1.4, "
        "producer.reset-index-only-with-fault-strategy-5.3.3)",
        ("tests/test_hidden_draw_agreement.py::test_a_hidden_draw_is_inferred_where_it_shows",
         "tests/fixtures/live/hidden-draw-5")),
    Verdict(
        "producer", "HIDDEN_RESET",
        "a retry's random draw shown only now (a broker was avoided meanwhile)", VERDICT,
        "reset",
        "After a `RESET`, a send no counter explains: while a broker was avoided, draws a "
        "whole broker's queues apart chose alike, so the draw shows only now and the counter "
        "is inferred again here (the isolation may end `ISOLATION_EDGE_MS` sooner than the "
        "check dates it). Once per draw.",
        "`resetIndex` as for `RESET`, and the isolation that hides it (spec 2.5)",
        ("tests/test_hidden_draw_agreement.py::test_a_hidden_draw_is_inferred_where_it_shows",
         "tests/test_hidden_draw_agreement.py::"
         "test_without_the_edge_or_the_reinference_the_sends_are_unexplained",
         "tests/fixtures/live/hidden-draw-5")),
    Verdict(
        "producer", "WORST_INFERRED", "pickOneAtLeast's counter inferred (its first use)",
        VERDICT, "inferred",
        "4.x with fault tolerance on, every broker isolated: `pickOneAtLeast` returns the "
        "`whichItemWorst`-th of the better half of the sorted fault items, a counter whose "
        "random start no log states; the first send that uses it shows the start.",
        "`LatencyFaultToleranceImpl.pickOneAtLeast`, 4.9.8 lines 66-84 (spec 2.4; fact "
        "producer.pick-one-at-least-rotation)",
        ("tests/test_default_route_agreement.py::"
         "test_pickoneatleast_counter_is_inferred_where_its_start_matters",
         "tests/fixtures/live/default-route-4")),
    Verdict(
        "producer", "IN_FLIGHT", "in flight at a change", VERDICT, "in_flight",
        "No counter explains the send, and a broker's observed condition changed (a `down` or "
        "`up` time of the trace) while it was under way: what it met depends on timing inside "
        "the broker that the trace does not record.",
        "an attempt's outcome depends on when its broker stopped or came back during it "
        "(spec 2.6)",
        ("tests/test_verdicts.py::test_a_send_under_way_when_its_broker_went_down_is_in_flight",
         )),
    Verdict(
        "producer", "WRITTEN_NOT_STORED", "a oneway call to a stopped broker that no broker "
        "stored", VERDICT, "written_not_stored",
        "A oneway send whose call returned but whose message no broker stored, and whose queue "
        "the model puts on a broker killed (or paused, then killed) from at most "
        "`IN_BROKER_MS` after the call to its restart: what its socket held was never stored.",
        "a oneway call does not wait for its write, and from 5.3.0 a failed connect drops the "
        "request silently (facts remoting.oneway-call-does-not-wait-for-write, "
        "remoting.oneway-dropped-when-connect-fails-since-5.3.0)",
        ("tests/test_producer_modes.py::"
         "test_a_oneway_message_sent_to_a_paused_broker_dies_when_it_is_killed_paused",
         "tests/test_producer_modes.py::"
         "test_a_oneway_call_to_a_killed_broker_throws_on_4_and_is_dropped_on_5",
         "tests/fixtures/live/paused-killed-oneway-4", "data/live/producer-modes-5")),
    Verdict(
        "producer", "REFUSED_BUSY",
        "a oneway call its broker refused as busy (a reply that matched no request)", VERDICT,
        "refused_busy",
        "A oneway message no broker stored, whose queue the model puts on a broker that, "
        "within `REFUSED_WITHIN_MS` of the call, sent the client a reply of code 2 that matched "
        "no request: its flow control refused it. Each such reply explains one message.",
        "the broker answers even a oneway request `[TIMEOUT_CLEAN_QUEUE]broker busy` when it "
        "waited too long (facts broker.system-busy-code-2, broker.wait-time-in-send-queue-200ms)",
        ("tests/test_producer_modes.py::"
         "test_a_oneway_message_its_broker_refused_as_busy_is_explained_by_the_reply",
         "tests/fixtures/live/oneway-busy-5")),
    Verdict(
        "producer", "ILLEGAL_QUEUE",
        "a oneway call to a queue its broker does not hold (refused, unanswered)", VERDICT,
        "illegal_queue",
        "A oneway message no broker stored, whose queue the model puts at a queue id its "
        "broker does not hold for the topic (the route the recording read from the brokers): "
        "the client's route was not the brokers', e.g. the default topic's after a lookup "
        "that found no route in time.",
        "the broker refuses the message ('request queueId[N] is illegal') and answers a oneway "
        "request with nothing; a producer without a route falls back to the default topic's, "
        "four queues a broker (facts broker.illegal-queue-id-unanswered-for-oneway, "
        "producer.default-topic-route-fallback-5)",
        ("tests/test_producer_modes.py::"
         "test_a_oneway_message_to_a_queue_its_broker_does_not_hold_is_refused",)),
    Verdict(
        "producer", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "Nothing explains the send: the model disagrees with what the real client did. The "
        "tests fail on it, and `live check` exits 3.",
        "none: a disagreement with upstream (or a reading the check lacks)",
        ("tests/test_hidden_draw_agreement.py::"
         "test_without_the_edge_or_the_reinference_the_sends_are_unexplained",
         "tests/fixtures/live/hidden-draw-5")),
    Verdict(
        "producer", "NO_ROUTE", "FAILED (no route yet)", LABEL, "no_route",
        "What the model predicts for a send made before its client had the topic's route: it "
        "fails before any attempt. The send agrees (and counts as `no_route`) when the real "
        "one failed.",
        "`sendDefaultImpl` throws \"No route info of this topic\" (spec 2.6; fact "
        "producer.no-route-info)",
        ("tests/test_churn_agreement.py::test_a_send_before_the_first_route_fails_as_the_model_does",
         "tests/fixtures/live/churn-5")),
    Verdict(
        "producer", "LATE_ROUTE", "FAILED (route found after the send's timeout)", LABEL,
        "no_route",
        "What the model predicts for the send whose route lookup outlasted its timeout (the "
        "route logged more than `sendMsgTimeout` after it began): it fails before any attempt; "
        "it agrees (and counts as `no_route`) when the real one failed.",
        "the budget starts before the lookup, and the loop selects, then throws "
        "\"sendDefaultImpl call timeout\" (facts producer.send-budget-starts-before-route-lookup, "
        "producer.budget-checked-before-each-attempt)",
        ("tests/test_late_route_agreement.py::"
         "test_the_send_whose_route_came_after_its_timeout_failed_before_any_attempt",
         "tests/test_late_route_agreement.py::test_only_a_lookup_past_the_timeout_fails_the_send",
         "tests/fixtures/live/late-route-5")),
    Verdict(
        "producer", "LOST", "LOST", LABEL, None,
        "What a oneway send's row says it observed when its call returned and the topic's dump "
        "found its message in no queue: only `WRITTEN_NOT_STORED`, `REFUSED_BUSY` or "
        "`ILLEGAL_QUEUE` explains it.",
        "a oneway call returns before its write (fact remoting.oneway-call-does-not-wait-for-"
        "write); the message trace records no oneway send (fact trace.oneway-send-not-traced)",
        ("tests/test_producer_modes.py::"
         "test_a_oneway_message_sent_to_a_paused_broker_dies_when_it_is_killed_paused",
         "tests/fixtures/live/paused-killed-oneway-4")),
    Verdict(
        "producer", "UNLOGGED_DOWN", "an attempt the client did not log as failed did not fail",
        READING, None,
        "With the producer's whole client log, an attempt that meets no logged failure did not "
        "fail, whatever the trace's conditions say of its broker: the trace dates a broker "
        "`down` from any producer's failed attempt, which need not mean it was down.",
        "`sendDefaultImpl` logs every failed attempt before it retries or throws, 4.9.8 lines "
        "595-640 (fact producer.every-failed-attempt-logged)",
        ("tests/test_in_flight_gap.py::test_with_the_whole_log_an_unlogged_attempt_did_not_fail",
         "tests/test_in_flight_gap.py::test_the_soaks_last_gap_is_explained",
         "tests/fixtures/live/in-flight-gap-5a")),
    Verdict(
        "producer", "STORED_IN_BUDGET", "the stored attempt answered within its budget",
        READING, None,
        "The attempt at which the real client stored the message had its answer within the "
        "budget the loop gave it, though the message trace's `costTime` (hooks included) or "
        "the client's measured send may pass it by a few ms.",
        "`invokeSync` waits only for what is left of the budget, else throws a timeout "
        "(fact remoting.sync-waits-for-the-time-left)",
        ("tests/test_in_flight_gap.py::test_the_stored_attempt_answered_within_its_budget",
         "tests/fixtures/live/in-flight-gap-5b")),
    Verdict(
        "producer", "FIRST_ATTEMPT_LOGGED",
        "the first send's failed first attempt began when logged", READING, None,
        "The send whose lookup fetched the first route begins its first attempt when the route "
        "came; when that attempt failed, the earliest failure the producer logged before the "
        "next send (or the send's timeout) is it, and it began when logged, later than the "
        "route's line.",
        "the client logs `route info changed` before it installs the list and opens the "
        "broker's channel, and the lookup is spent from the budget (fact "
        "producer.send-budget-starts-before-route-lookup)",
        ("tests/test_first_attempt_agreement.py::"
         "test_the_first_sends_failed_attempt_began_when_the_client_logged_it",
         "tests/fixtures/live/first-attempt-4")),
    Verdict(
        "producer", "AS_LOGGED", "the draw whose failed attempts are the ones its client logged",
        READING, None,
        "With the client's log read whole, where several counter starts or retry draws explain "
        "a send's queue, the check goes on from one whose failed attempts (their brokers) are "
        "the ones the client logged while that send ran.",
        "every failed attempt is logged (fact producer.every-failed-attempt-logged)",
        ("tests/test_logged_isolation_agreement.py::"
         "test_without_the_logged_failure_the_first_draw_leaves_sends_unexplained",
         "tests/fixtures/live/logged-draw-5")),
    Verdict(
        "producer", "STATUS_COPY",
        "a copy in the topic's dump beside the send's last: an attempt answered with a status "
        "other than SEND_OK", READING, None,
        "With slaves, the recording holds the topic's dump: an attempt at a queue that holds a "
        "copy of the message, not the send's last and with no logged failure, was answered "
        "with a send status other than SEND_OK (a 4.x SYNC_MASTER without its slave: "
        "SLAVE_NOT_AVAILABLE), which the client logs nowhere; every copy must be where one of "
        "the model's attempts went, or the send is unexplained.",
        "a 4.x SYNC_MASTER writes, then answers SLAVE_NOT_AVAILABLE without a slave; the loop "
        "retries a status other than SEND_OK only with retryAnotherBrokerWhenNotStoreOK, and "
        "logs nothing (facts broker.sync-master-answers-slave-not-available-4x, "
        "producer.retry-another-broker-retries-and-returns-last-status)",
        ("tests/test_live_slaves.py::test_every_copy_is_an_attempt_answered_with_a_status",
         "tests/test_live_slaves.py::test_without_the_switch_or_the_dump_the_sends_are_unexplained",
         "tests/test_live_slaves.py::"
         "test_the_dumps_copies_narrow_the_counter_a_failed_send_is_explained_by",
         "data/live/slave-statuses-4", "tests/fixtures/live/slave-threads-4")),
    Verdict(
        "producer", "LOGGED_RT", "the fault item holds the client's logged RT", READING, None,
        "A logged failed attempt's fault item holds the `RT` the client logged, not the loop's "
        "own attempt time (which begins a few ms earlier): `pickOneAtLeast` sorts the isolated "
        "brokers by that latency, then by the isolation's end.",
        "`updateFaultItem(broker, endTimestamp - beginTimestampPrev, true)` with the `RT` it "
        "logs, 4.9.8 `sendDefaultImpl` lines 595-612 (spec 2.4; facts "
        "producer.fault-item-stores-measured-latency, producer.pick-one-at-least-rotation)",
        ("tests/test_verdicts.py::test_a_logged_failures_fault_item_holds_the_logged_rt",
         "tests/test_default_route_agreement.py::test_the_sends_on_the_default_route_agree",
         "tests/fixtures/live/default-route-4")),
    Verdict(
        "producer", "SLOW_SEND_LOGGED", "a slow send isolated its broker as its client logged",
        READING, None,
        "On a line that logs isolations (5.1.4 and later) a successful attempt isolates its "
        "broker exactly when, and for as long as, its client logged: the check's latency for an "
        "attempt is not the client's, and 550 ms sits on the 5.x table's edge.",
        "`FaultItem.updateNotAvailableDuration` logs `<broker> will be isolated for <N> ms.` "
        "(spec 2.5; fact producer.isolation-logged-since-5.1.4)",
        ("tests/test_logged_isolation_agreement.py::"
         "test_a_slow_send_isolates_because_its_client_logged_so",
         "tests/test_logged_isolation_agreement.py::"
         "test_a_send_the_check_dates_slow_isolates_only_if_its_client_logged_so",
         "tests/fixtures/live/logged-draw-5")),
    Verdict(
        "producer", "ANSWERED", "an outage dated from a broker's answer is left out", READING,
        None,
        "`check_recording` leaves out an outage the importer dated from a failed attempt the "
        "broker answered (an `MQBrokerException`, e.g. code 1 for a queue of the default "
        "route): that broker was up. The outage starts at its first unanswered failure, if "
        "any.",
        "an `MQBrokerException` is the broker's reply (spec 2.6; fact "
        "producer.default-topic-route-fallback-4.9.8)",
        ("tests/test_default_route_agreement.py::"
         "test_an_answered_failure_does_not_take_its_broker_down",
         "tests/fixtures/live/default-route-4")),
    # ------------------------------------------------------------------ the allocation
    Verdict(
        "allocation", "exact", "exact", VERDICT, "exact",
        "The group's strategy, run on the imported member list at the logged time and on the "
        "queues of the consumer's own logged route, gives the assignment it logged "
        "(`rebalanced result changed`); `mqAllSize` and `cidAllSize` match.",
        "`RebalanceImpl.rebalanceByTopic`: the strategy on the sorted queues and member ids "
        "(spec 3.1, 4.1; fact consumer.rebalance-log-line)",
        ("tests/test_live_recordings.py::"
         "test_every_logged_assignment_is_the_strategy_on_the_imported_members",
         "data/live/membership-day-4", "data/live/membership-day-5")),
    Verdict(
        "allocation", "near_change", "near_change", VERDICT, "near_change",
        "The assignment is the strategy's split of the member list just before or after a "
        "membership change within the logs' precision (`slack_ms`; a removal logged to the "
        "second may have come up to `COARSE_MS` later).",
        "the brokers log joins and leaves to the second, the clients to the millisecond "
        "(spec 5.1, 5.3)",
        ("tests/test_live_recordings.py::"
         "test_every_logged_assignment_is_the_strategy_on_the_imported_members",
         "data/live/membership-day-5")),
    Verdict(
        "allocation", "STALE_VIEW", "a broker's own view", VERDICT, "stale_view",
        "The assignment is the strategy's split of a list one broker of the consumer's route "
        "held then, which the imported membership never had: the consumer asked that broker "
        "while the brokers disagreed (a paused one still holding a consumer that left, or "
        "holding a reconnected one twice).",
        "`findConsumerIdList` asks one broker of the topic, at random (spec 4.1; fact "
        "consumer.member-list-from-one-random-broker)",
        ("tests/test_churn_agreement.py::"
         "test_an_assignment_from_one_brokers_view_is_named_and_sizes_must_match",
         "tests/test_churn_agreement.py::"
         "test_every_send_and_assignment_of_the_churn_recordings_is_explained",
         "tests/fixtures/live/churn-4", "tests/fixtures/live/churn-5")),
    Verdict(
        "allocation", "unexplained", "unexplained", VERDICT, "unexplained",
        "No candidate list explains the logged assignment; `unexplained_detail` gives every "
        "list tried and the consumer's route changes before it.",
        "none: a disagreement with upstream (or a reading the check lacks)",
        ("tests/test_killed_first_broker_agreement.py::"
         "test_a_removal_counted_from_its_seconds_start_leaves_the_rebalance_unexplained",
         "tests/fixtures/live/killed-first-broker-5")),
    Verdict(
        "allocation", "RESTART_ANSWERS",
        "a restarted broker answers before the recorder sees it back", READING, None,
        "A broker the scenario killed and restarted is left out of the candidate broker views "
        "from the kill until its new process started (its log's first line), not until the "
        "recorder saw it registered: it answers `findConsumerIdList` before that.",
        "a restarted broker serves the clients that reconnect before the name server lists it "
        "(spec 5.1, 7)",
        ("tests/test_restart_answers_agreement.py::"
         "test_a_restarted_brokers_first_answer_explains_an_assignment",
         "tests/fixtures/live/restart-answers-4")),
    Verdict(
        "allocation", "COARSE_MS", 999, READING, None,
        "A broker logs a member's removal to the second, so the check dates it at the second's "
        "start; it came within the next `COARSE_MS` ms, and the list before it counts while "
        "that second reaches the check's window.",
        "the broker's log stamps a removal (unregister, channel closed, expired) to the second "
        "(spec 5.3; fact broker.membership-log-lines)",
        ("tests/test_killed_first_broker_agreement.py::"
         "test_a_removal_counted_from_its_seconds_start_leaves_the_rebalance_unexplained",
         "tests/fixtures/live/killed-first-broker-5")),
    # ------------------------------------------------------------------ the ordered producer
    Verdict(
        "ordered", "AGREE", "agrees", VERDICT, "stored_at_key_queue",
        "Stored at the queue the hash selector gives the send's key on the publish list of "
        "the route its client had logged by then.",
        "`sendSelectImpl` asks the selector once: one attempt, no retry (spec 2.2; fact "
        "producer.ordered-send-selects-once)",
        ("tests/test_producer_modes.py::"
         "test_an_ordered_send_is_never_retried_and_its_keys_move_with_the_route",
         "data/live/producer-modes-4", "data/live/producer-modes-5",
         "data/live/producer-modes-5.5")),
    Verdict(
        "ordered", "ROUTE_NOT_INSTALLED",
        "the previous route's queue: the new route logged, not installed yet", VERDICT,
        "route_not_installed",
        "Stored where the previous route's list gives the key, within `LOG_BEFORE_INSTALL_MS` "
        "of the new route's line: the client logs a route before it installs it.",
        "`MQClientInstance.updateTopicRouteInfoFromNameServer` logs `route info changed`, then "
        "builds and installs the list (spec 1.3)",
        ("tests/test_verdicts.py::test_an_ordered_send_just_after_a_route_line_may_use_the_old_list",
         )),
    Verdict(
        "ordered", "FAILED_STOPPED", "failed at its key's queue, on a stopped broker: not retried",
        VERDICT, "failed_stopped",
        "Failed, and the selector's queue is on a broker the scenario had paused or killed at "
        "some moment of the attempt (up to `FAILED_WINDOW_MS` after the send began): the send "
        "waited out its timeout there, or was refused, and was not retried.",
        "an ordered send makes one attempt and reports no fault (facts "
        "producer.ordered-send-selects-once, producer.ordered-send-reports-no-fault)",
        ("tests/test_producer_modes.py::"
         "test_an_ordered_send_is_never_retried_and_its_keys_move_with_the_route",
         "tests/test_producer_modes.py::"
         "test_the_ordered_check_fails_without_the_route_changes_or_the_stopped_brokers",
         "data/live/producer-modes-5")),
    Verdict(
        "ordered", "FAILED_BROKER_ERROR", "failed with its broker's error reply: not retried",
        VERDICT, "failed_broker_error",
        "Failed with its broker's error reply (an `MQBrokerException`, e.g. code 2, the "
        "broker's flow control): the one attempt was answered and not retried. The reply does "
        "not name its broker, so which queue answered is not checked.",
        "one attempt, no retry (facts producer.ordered-send-selects-once, "
        "broker.system-busy-code-2)",
        ("tests/test_producer_modes.py::"
         "test_an_ordered_send_answered_with_a_broker_error_is_explained_by_the_reply",
         "tests/fixtures/live/ordered-busy-5")),
    Verdict(
        "ordered", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "None of the above: the send is counted in `unexplained`, and the tests fail on it.",
        "none: a disagreement with upstream (or a reading the check lacks)",
        ("tests/test_producer_modes.py::"
         "test_the_ordered_check_fails_without_the_route_changes_or_the_stopped_brokers",
         "data/live/producer-modes-5")),
    # ------------------------------------------------------------------ the async producer
    Verdict(
        "async", "AGREE", "agrees", VERDICT, "agree",
        "The first hop is where the executor thread's counter puts it, and the message was "
        "stored there, or (4.x, a killed broker) at the retry broker that thread selected, at "
        "the first hop's queue id.",
        "one selection per send on the executor thread's counter; a retry re-sends the request "
        "to the broker `selectOneMessageQueue(tp, last)` gives (facts "
        "producer.async-retry-selects-a-broker-and-resends-the-request, "
        "remoting.async-connect-failure-since-5.3.0)",
        ("tests/test_producer_async.py::test_every_async_send_is_explained",
         "data/live/producer-async-4", "data/live/producer-async-5",
         "data/live/producer-async-5.5")),
    Verdict(
        "async", "INFERRED", "counter inferred (executor thread, route change)", VERDICT,
        "inferred",
        "As `AGREE`, for a first hop that told the executor thread's possible counter starts "
        "apart: each executor thread has its own counter, from a random start, new with each "
        "route change.",
        "`ThreadLocalIndex` per thread (spec 2.1; facts producer.counter-starts-random, "
        "producer.counter-per-topic-new-on-route-change)",
        ("tests/test_producer_async.py::test_every_async_send_is_explained",
         "data/live/producer-async-4")),
    Verdict(
        "async", "RETRY_ELSEWHERE", "retried at the first hop's queue id on another broker",
        VERDICT, "retry_elsewhere",
        "The first hop as predicted, at a broker killed at most `IN_BROKER_MS` after it, or "
        "paused at it and killed within `PENDING_MS`; the message stored at that hop's queue "
        "id on another broker, chosen on a thread whose counter the check does not infer (a "
        "callback thread for `send request failed`, or from 5.3.0 the event loop for a "
        "refused connection).",
        "the retry keeps the request, so its queue id (facts "
        "producer.async-retry-selects-a-broker-and-resends-the-request, "
        "remoting.async-connect-failure-since-5.3.0, "
        "remoting.async-send-request-failed-on-a-callback-thread)",
        ("tests/test_producer_async.py::test_a_retry_keeps_the_first_hops_queue_id",
         "data/live/producer-async-5")),
    Verdict(
        "async", "FAILED_STOPPED", "failed while a broker was stopped", VERDICT,
        "failed_stopped",
        "The first hop as predicted, at a broker paused or killed from at most `IN_BROKER_MS` "
        "after the hop to its resume or restart, and the send failed: the hop timed out or was "
        "refused, and its retries, if any, failed or ran out of time.",
        "`onExceptionImpl` retries `retryTimesWhenSendAsyncFailed` times (from 5.3.2 only while "
        "time is left), then calls `onException` (facts "
        "producer.async-retry-selects-a-broker-and-resends-the-request, "
        "producer.async-timed-out-hop-not-retried-since-5.3.2)",
        ("tests/test_producer_async.py::test_every_async_send_is_explained",
         "data/live/producer-async-4")),
    Verdict(
        "async", "FAILED_BROKER_ERROR", "failed with its broker's error reply: not retried",
        VERDICT, "failed_broker_error",
        "The first hop as predicted; the send failed with a broker's error reply (an "
        "`MQBrokerException`, e.g. code 2, the broker's flow control at start-up): a hop "
        "answered with an error code is not retried.",
        "`processSendResponse` throws and `onExceptionImpl` is called with needRetry false "
        "(facts producer.async-retry-selects-a-broker-and-resends-the-request, "
        "broker.system-busy-code-2)",
        ("tests/test_producer_async.py::test_every_async_send_is_explained",
         "data/live/producer-async-5")),
    Verdict(
        "async", "NO_HOP", "failed before any hop", VERDICT, "no_route",
        "The send failed before its executor thread made a hop (no hook ran): no route yet, "
        "or the executor's queue outlasted the timeout (`DEFAULT ASYNC send call timeout`).",
        "`sendDefaultImpl` throws before `sendKernelImpl` (spec 2.6; fact "
        "producer.no-route-info)",
        ("tests/test_producer_async.py::test_the_async_check_fails_on_a_wrong_model",)),
    Verdict(
        "async", "BACK_PRESSURE", "no permit came in time (back pressure)", VERDICT,
        "back_pressure",
        "A send of a producer with back pressure on that failed before any hop with `send "
        "message tryAcquire semaphoreAsyncNum timeout`: through its whole wait (the send's "
        "timeout from its call) the other sends can have held every permit "
        "(`permits_held`); a send that got a permit while every one was surely held is "
        "unexplained instead.",
        "with `enableBackpressureForAsyncMode` (off by default, 5.x) `send(msg, callback)` "
        "takes one of `backPressureForAsyncSendNum` permits on the calling thread, waiting at "
        "most the rest of the timeout, and gives it back when the send ends (fact "
        "producer.async-back-pressure-permits-5x)",
        ("tests/test_producer_async.py::test_a_send_without_a_permit_failed_while_all_were_held",
         "data/live/async-back-pressure-5", "data/live/async-back-pressure-5.5")),
    Verdict(
        "async", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "None of the above: the send is counted in `unexplained`, and the tests fail on it.",
        "none: a disagreement with upstream (or a reading the check lacks)",
        ("tests/test_producer_async.py::test_the_async_check_fails_on_a_wrong_model",)),
    # ------------------------------------------------------------------ the gRPC producer
    Verdict(
        "grpc-client", "client.inferred", "inferred", VERDICT, "client.inferred",
        "The first successful send: the client's counter start (`RandomUtils.nextInt`) is not "
        "recorded and is inferred from its receipt's queue; it must then hold for every later "
        "send.",
        "`PublishingLoadBalancer`'s counter starts at random and is kept across route updates "
        "(fact grpc.publishing-balancer-writable-masters-random-start)",
        ("tests/test_live_grpc.py::test_the_shipped_grpc_recording_agrees",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-client", "client.agree", "agree", VERDICT, "client.agree",
        "The client model (`PublishingLoadBalancer` and `ProducerSendLoop`, or the Python "
        "client's selector), run on the client's logged route and attempts, names the "
        "receipt's queue (Python: one step on from the previous receipt).",
        "the client's candidates are taken once, attempt n at candidate n - 1 (fact "
        "grpc.producer-candidates-once-attempt-mod)",
        ("tests/test_live_grpc.py::test_the_shipped_grpc_recording_agrees",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-client", "client.retried", "retried", VERDICT, "client.retried",
        "Python client: the receipt is 2 to `max_attempts` queues on from the previous one, "
        "so the send took that many attempts (the Python client logs no failed attempt but "
        "the last of a failed send).",
        "rocketmq-python-client's selector takes the next queue per attempt, isolating nothing "
        "(`grpc.python_client`)",
        ("tests/test_live_grpc_python.py::test_a_shipped_python_recording_agrees",
         "data/live/grpc/grpc-python-producer-outage-5")),
    Verdict(
        "grpc-client", "client.unobserved", "unobserved", VERDICT, "client.unobserved",
        "A failed send has no receipt: which queues the client chose for it is not recorded "
        "(the model still runs it, to keep the counter).",
        "the failed send's attempts took the counter's next candidates (fact "
        "grpc.producer-candidates-once-attempt-mod)",
        ("tests/test_live_grpc.py::test_the_shipped_grpc_recording_agrees",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-client", "client.disagree", "disagree", VERDICT, "client.disagree",
        "The model names another queue than the receipt's (or no counter start gives the first "
        "receipt's queue): counted in `unexplained`.",
        "none: a disagreement with the client",
        ("tests/test_live_grpc.py::test_the_grpc_check_names_what_it_cannot_explain",
         "tests/test_live_grpc_python.py::test_a_receipt_moved_to_another_queue_is_unexplained",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-proxy", "proxy.inferred", "inferred", VERDICT, "proxy.inferred",
        "The first stored send: the Proxy's counter start is not recorded and is inferred from "
        "where its copies were stored.",
        "the Proxy picks the queue itself, from its own selector with a random start (fact "
        "proxy.send-selects-its-own-queue)",
        ("tests/test_live_grpc.py::test_a_proxy_route_reload_between_two_attempts_of_one_send",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-proxy", "proxy.agree", "agree", VERDICT, "proxy.agree",
        "The Proxy model (`MessageQueueSelector` of rocketmq-proxy, one counter step per "
        "attempt over the sorted write queues) puts every stored copy of the send where the "
        "topic's dump found it, the successful attempt's at the receipt's offset.",
        "fact proxy.send-selects-its-own-queue",
        ("tests/test_live_grpc.py::test_a_proxy_route_reload_between_two_attempts_of_one_send",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-proxy", "proxy.reload", "reload", VERDICT, "proxy.reload",
        "The copies need a new counter start before the send or between two of its attempts, "
        "and a route reload can have happened by then (`REFRESH_MS` after the earliest "
        "previous one, the first no earlier than the first gRPC client's start).",
        "the Proxy's route cache is refreshed every 20 s, with a new selector (fact "
        "proxy.route-cache-refresh-20s)",
        ("tests/test_live_grpc.py::test_a_proxy_route_reload_between_two_attempts_of_one_send",
         "tests/test_live_grpc.py::"
         "test_a_send_that_fits_two_readings_keeps_both_until_a_later_send_decides",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-proxy", "proxy.unobserved", "unobserved", VERDICT, "proxy.unobserved",
        "Nothing of the send was stored (every attempt failed and none was kept): its queues "
        "are not checked, and the counter moves on one step per attempt.",
        "fact proxy.send-selects-its-own-queue",
        ("tests/test_verdicts.py::test_a_send_nothing_of_which_was_stored_is_unobserved",)),
    Verdict(
        "grpc-proxy", "proxy.unexplained", "unexplained", VERDICT, "proxy.unexplained",
        "No counter start puts the copies where they are, or only one too soon for a route "
        "reload: counted in `unexplained`, with a note saying which.",
        "none: a disagreement with the Proxy",
        ("tests/test_live_grpc.py::test_the_grpc_check_names_what_it_cannot_explain",
         "tests/test_live_grpc.py::test_a_proxy_route_reload_between_two_attempts_of_one_send",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-attempt", "attempt_outcomes.ok", "ok", VERDICT, "attempt_outcomes.ok",
        "A successful attempt whose broker (the Proxy model's) was not surely paused during "
        "it.",
        "a paused broker answers nothing until it resumes",
        ("tests/test_live_grpc.py::test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-attempt", "attempt_outcomes.paused", "paused", VERDICT, "attempt_outcomes.paused",
        "A failed attempt whose broker may have been paused during it (from the pause's start "
        "to the resume's return).",
        "a failed attempt isolates its endpoints and the send goes on (fact "
        "grpc.producer-isolates-failed-endpoints-heartbeat-rejoins)",
        ("tests/test_live_grpc.py::test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it",
         "data/live/grpc/grpc-producer-outage-5")),
    Verdict(
        "grpc-attempt", "attempt_outcomes.busy", "busy", VERDICT, "attempt_outcomes.busy",
        "A failed attempt on a running broker that the client logged failed \"due to too many "
        "requests\": the Proxy's `TOO_MANY_REQUESTS`, the broker's flow control.",
        "a throttled attempt is retried after the policy's backoff (fact "
        "grpc.producer-throttled-retry-backoff-from-proxy)",
        ("tests/test_live_grpc.py::test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it",
         )),
    Verdict(
        "grpc-attempt", "attempt_outcomes.fail_unexplained", "fail_unexplained", VERDICT,
        "attempt_outcomes.fail_unexplained",
        "A failed attempt whose broker ran and that was not refused as busy: counted in "
        "`unexplained`.",
        "none: a failure the recording does not explain",
        ("tests/test_live_grpc.py::test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it",
         )),
    Verdict(
        "grpc-attempt", "attempt_outcomes.ok_while_paused", "ok_while_paused", VERDICT,
        "attempt_outcomes.ok_while_paused",
        "A successful attempt made wholly inside the stretch its broker surely was paused "
        "(from the pause's return to the resume's start): counted in `unexplained`.",
        "none: a paused broker cannot answer",
        ("tests/test_live_grpc.py::test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it",
         "tests/test_live_grpc.py::test_the_grpc_check_names_what_it_cannot_explain")),
    Verdict(
        "grpc-attempt", "attempt_outcomes.unknown_queue", "unknown_queue", VERDICT,
        "attempt_outcomes.unknown_queue",
        "An attempt the Proxy model gave no queue (its send `proxy.unobserved`, or "
        "`proxy.unexplained` with no start that fits): which broker it met is not known, so "
        "its outcome is not checked.",
        "none: what the recording does not show",
        ("tests/test_verdicts.py::test_a_send_nothing_of_which_was_stored_is_unobserved",)),
    # ------------------------------------------------------------------ the gRPC simple consumer
    Verdict(
        "grpc-simple", "verdicts.inferred", "inferred", VERDICT, "verdicts.inferred",
        "The first call that got messages: the rotation's counter start is not recorded and is "
        "inferred from the queue it asked for.",
        "each `receive` takes the next readable master queue, from a random start (fact "
        "grpc.simple-consumer-receive-rotation)",
        ("tests/test_live_grpc_consumers.py::test_the_shipped_grpc_clients_recording_agrees",
         "data/live/grpc/grpc-clients-5")),
    Verdict(
        "grpc-simple", "verdicts.agree", "agree", VERDICT, "verdicts.agree",
        "A later call that got messages asked the model's queue (`SubscriptionLoadBalancer`, "
        "one step per call), and every message came from its broker.",
        "the Proxy pops from the named broker, any queue (facts "
        "grpc.simple-consumer-receive-rotation, proxy.receive-pops-named-broker-any-queue)",
        ("tests/test_live_grpc_consumers.py::test_the_shipped_grpc_clients_recording_agrees",
         "data/live/grpc/grpc-clients-5")),
    Verdict(
        "grpc-simple", "verdicts.empty", "empty", VERDICT, "verdicts.empty",
        "A call that got no message: counted, not checked.",
        "a receive of an empty queue returns nothing (fact "
        "grpc.simple-consumer-receive-rotation)",
        ("tests/test_live_grpc_consumers.py::test_the_shipped_grpc_clients_recording_agrees",
         "data/live/grpc/grpc-clients-5")),
    Verdict(
        "grpc-simple", "verdicts.error_paused", "error_paused", VERDICT, "verdicts.error_paused",
        "A failed call whose model queue's broker was paused during it.",
        "a paused broker answers nothing until it resumes",
        ("tests/test_live_grpc_consumers.py::test_the_shipped_grpc_clients_recording_agrees",
         "data/live/grpc/grpc-clients-5")),
    Verdict(
        "grpc-simple", "verdicts.error_unexplained", "error_unexplained", VERDICT,
        "verdicts.error_unexplained",
        "A failed call on a running broker: counted in `unexplained`.",
        "none: a failure the recording does not explain",
        ("tests/test_verdicts.py::test_a_failed_receive_on_a_running_broker_is_unexplained",
         "data/live/grpc/grpc-clients-5")),
    Verdict(
        "grpc-simple", "verdicts.disagree", "disagree", VERDICT, "verdicts.disagree",
        "A call that got messages asked another queue than the model's, or got them from "
        "another broker: counted in `unexplained`.",
        "none: a disagreement with the client",
        ("tests/test_live_grpc_consumers.py::"
         "test_the_consumer_check_names_what_it_cannot_explain",
         "data/live/grpc/grpc-clients-5")),
    # ------------------------------------------------------------------ broadcasting groups
    Verdict(
        "broadcast", "AGREE", "agrees", VERDICT, "agree",
        "A logged `messageQueueChanged` set equal to the readable queues of the route the "
        "member held; a queue created with no lock needed, or with its lock free (no other "
        "member had taken it, or that member's lock was `BROKER_LOCK_MAX_LIVE_MS` old).",
        "the `BROADCASTING` branch of `rebalanceByTopic` takes the whole subscribe set (spec "
        "1.4; facts consumer.message-model-clustering-default-broadcasting-local, "
        "consumer.broadcast-orderly-takes-broker-lock-until-5.3.1)",
        _BROADCAST_EXPLAINED),
    Verdict(
        "broadcast", "LOCK_HELD", "refused: another member holds the lock", VERDICT,
        "lock_held",
        "An orderly member on a line whose broadcasting rebalance locks (up to 5.3.1) was "
        "refused a queue's lock while another member of its group had taken that queue less "
        "than `BROKER_LOCK_MAX_LIVE_MS` (60 s) before: the broker keeps one lock per group and "
        "queue, and a broadcasting member never renews its own.",
        "facts consumer.broadcast-orderly-takes-broker-lock-until-5.3.1, "
        "consumer.orderly-lock-live-30s-client-60s-broker (issue #1286)",
        ("tests/test_consumer_broadcast.py::test_every_broadcasting_member_is_explained",
         "data/live/broadcasting-4")),
    Verdict(
        "broadcast", "START_AGREE", "read from the queue's end at its creation", VERDICT,
        "start_agree",
        "A member's first offset of a queue is the queue's max offset when it created the "
        "queue (within `SLACK_MS` before its log line), and it read every offset from there to "
        "the queue's end: its offsets are its own, and it had none.",
        "`computePullFromWhere` under `CONSUME_FROM_LAST_OFFSET` with no local offset (spec "
        "4.3; facts consumer.message-model-clustering-default-broadcasting-local, "
        "consumer.default-consume-from-last-offset)",
        _BROADCAST_EXPLAINED),
    Verdict(
        "broadcast", "NOTHING_AFTER", "created after the queue's last message", VERDICT,
        "nothing_after",
        "A queue the member created after its last message was stored, or whose messages were "
        "all stored while it did not hold it (dropped when its broker left the route, created "
        "again at its end when the broker came back): nothing to read, and nothing read.",
        "as `START_AGREE`",
        (*_BROADCAST_FAILS, "tests/test_consumer_broadcast.py::"
         "test_a_queue_dropped_and_created_again_starts_at_its_end_again")),
    Verdict(
        "broadcast", "STALLED_NOT_LATEST", "stalled: its broker held an older subscription",
        VERDICT, "stalled_not_latest",
        "Read from the model's start without a gap, but short of the queue's end, and the "
        "member's log holds pulls that queue's broker refused with code 25 (the consumer's "
        "subscription not latest) after the last message it read: its rebalance gave its "
        "subscription a new version, the heartbeat that carries it was skipped, and the broker "
        "refuses its pulls until the next one.",
        "fact consumer.rebalance-change-new-sub-version-pull-refused-until-heartbeat",
        ("tests/test_consumer_broadcast.py::test_a_member_stalled_by_an_old_subscription",
         "tests/fixtures/live/not-latest-4")),
    Verdict(
        "broadcast", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "A set that is not the route's, a refusal with no live holder or on a line that takes "
        "no lock, a lock granted while another member's was live, a first offset elsewhere, a "
        "gap, or a queue read that the member never created.",
        "none: a disagreement with the model",
        _BROADCAST_FAILS),
    # ------------------------------------------------------------------ orderly groups' locks
    Verdict(
        "orderly-locks", "GRANT_FREE", "granted: no lock held", VERDICT, "grant_free",
        "A broker's `not locked, I got it` line when its replayed lock table had no entry for "
        "the group and queue: never locked, unlocked by its holder, or lost with the broker's "
        "memory when it was killed.",
        "`RebalanceLockManager.tryLockBatch` (spec 4.4; fact "
        "consumer.orderly-lock-live-30s-client-60s-broker)",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "GRANT_EXPIRED", "granted: the holder's lock expired", VERDICT,
        "grant_expired",
        "A `lock expired, I got it` line when the holder had not renewed for "
        "`BROKER_LOCK_MAX_LIVE_MS` (60 s): its last renewal no later than its last moment "
        "alive, holding the queue, with the broker answering, and no earlier than a renewal "
        "period before the end of the last stretch long enough to hold one.",
        "spec 4.4 (`lockAll` every `REBALANCE_LOCK_INTERVAL`, the broker's 60 s); facts "
        "consumer.orderly-lock-live-30s-client-60s-broker, "
        "consumer.orderly-pop-service-locks-too-and-outlives-shutdown",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "REFUSED_HELD", "refused: another member's lock was live", VERDICT,
        "refused_held",
        "A `locked by other client` line while the table's holder was the client it names and "
        "its lock was younger than 60 s by the same bounds.",
        "as `GRANT_EXPIRED`",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "UNLOCKED", "unlocked by its holder", VERDICT, "unlocked",
        "An `unlockBatch` by the table's holder: a dropped queue's release "
        "(`removeUnnecessaryMessageQueue`) or a clean shutdown's.",
        "spec 4.1 (`removeUnnecessaryMessageQueue`, orderly clustering)",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "REFUSED_SEEN", "a refused creation the broker refused", VERDICT,
        "refused_seen",
        "A member's `add a new mq failed, ..., because lock failed` with the broker's refusal "
        "of that member and queue within `SLACK_MS`, or while the queue's broker was paused or "
        "down (the lock request failed).",
        "spec 4.1 (`updateProcessQueueTableInRebalance`: an orderly member creates a queue only "
        "once locked)",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "HELD", "consumed while its lock was held", VERDICT, "held",
        "A run of one member's consumption of a queue (no other member's message between) "
        "during which the replayed table held that member's lock.",
        "spec 4.4 (a message is consumed only while its queue is locked)",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "CACHED", "consumed on its own lock while the broker held none",
        VERDICT, "cached",
        "A run's messages consumed after a kill emptied a broker's table that held the "
        "member's lock, with nobody granted it since, within `LOCK_MAX_LIVE_MS` (30 s) of the "
        "kill: the member consumes what it pulls, from the restarted broker too, while its own "
        "view of the lock is young, whatever that broker holds.",
        "spec 4.4 (`isLockExpired`, client side 30 s); fact "
        "consumer.orderly-lock-live-30s-client-60s-broker",
        (_ORDERLY_TEST, "data/live/orderly-locks-4", "data/live/orderly-locks-5",
         "data/live/orderly-locks-5.5")),
    Verdict(
        "orderly-locks", "HANDOVER", "its lock on its way to the next holder at the end",
        VERDICT, "handover",
        "A queue's messages consumed by no member by the end, when they are the queue's tail "
        "(after the last message consumed) and the member that consumed that one had given up "
        "the table's lock (unlocked, or granted to another) at most `HANDOVER_MS` (51 s: a "
        "route poll, a rebalance and a second) before the end, nobody consuming it since.",
        "spec 4.1 (an orderly member creates a queue only once locked; the next holder locks "
        "it at its next rebalance, after its own route or member list changed)",
        ("tests/test_live_orderly.py::test_a_tail_left_while_its_lock_moved_is_a_handover",)),
    Verdict(
        "orderly-locks", "DUPLICATE", "its queue given to a member listed twice",
        VERDICT, "duplicate",
        "A queue's messages consumed by no member by the end, when at every member-list "
        "snapshot from the queue's last consumption (or the start) to the end the broker's "
        "list held an id twice and AVG, run for each distinct id, gave the queue to the copy: "
        "a member's stale channel (a heartbeat read after the member closed that connection) "
        "stands in the list until the broker's scan drops it, and the queue is nobody's.",
        "spec 4.1 (AVG takes `cidAll.indexOf(currentCID)`: the first of two equal ids; the "
        "second one's share is nobody's); fact consumer.rebalance-sorts-queues-and-ids",
        ("tests/test_live_orderly.py::test_a_queue_the_member_list_gives_to_a_copy_is_a_duplicate",)),
    Verdict(
        "orderly-locks", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "A grant over a live lock, a refusal or expiry naming another holder than the table's, "
        "a refused creation with no refusal, a run while another member held the lock, or a "
        "stored message of the group's queues consumed by no member.",
        "none: a disagreement with the model",
        ("tests/test_live_orderly.py::test_the_lock_check_fails_what_the_model_does_not_say",)),
    # ------------------------------------------------------------------ a broker's assignment
    Verdict(
        "broker-assignment", "exact", "exact", VERDICT, "exact",
        "The broker's `QueryAssignmentProcessor`, run on the imported member list at the logged "
        "time, the topic's queues and the group's request mode and `popShareQueueNum`, gives "
        "the assignment the consumer logged (`broker rebalanced result changed`), each queue's "
        "mode included.",
        "a consumer with `setClientRebalance(false)` asks a broker (spec 6; facts "
        "consumer.client-rebalance-default-true-5x, consumer.query-assignment-random-broker-3s)",
        ("tests/test_live_pop.py::test_every_broker_assignment_is_the_brokers_answer",
         "data/live/pop-consumers-5", "data/live/pop-consumers-5.5")),
    Verdict(
        "broker-assignment", "near_change", "near_change", VERDICT, "near_change",
        "The broker's answer on the member list just before or after a membership change "
        "within the logs' precision, as for a consumer that allocates itself.",
        "the brokers log joins and leaves to the second, the clients to the millisecond "
        "(spec 5.1, 5.3)",
        ("tests/test_live_pop.py::test_every_broker_assignment_is_the_brokers_answer",
         "data/live/pop-consumers-5.5")),
    Verdict(
        "broker-assignment", "STALE_VIEW", "a broker's own view", VERDICT, "stale_view",
        "The broker's answer on a list one broker of the topic held then, which the imported "
        "membership never had: the broker asked computes on its own member list.",
        "the broker answers from its own consumer list (spec 6; fact "
        "consumer.query-assignment-random-broker-3s)",
        ("tests/test_verdicts.py::test_each_verdict_counts_where_the_registry_says",)),
    Verdict(
        "broker-assignment", "unexplained", "unexplained", VERDICT, "unexplained",
        "No candidate list gives the logged answer; `unexplained_detail` gives the lists "
        "tried.",
        "none: a disagreement with the model",
        ("tests/test_live_pop.py::test_the_check_fails_with_another_pop_share",)),
    # ------------------------------------------------------------------ the Go client's producer
    Verdict(
        "go-producer", "AGREE", "stored at the first attempt's queue", VERDICT, "agree",
        "A Go send stored at the queue the model's first attempt takes: the producer's one "
        "round-robin counter stepped once before it, on the route in the name server's order "
        "as a lone 2.1.2 producer reorders it.",
        "rocketmq-client-go 2.1.2's `SendSync` with the default round-robin selector (facts "
        "go.producer-with-retry, go.publish-order-twice-since-2.1.2)",
        ("tests/test_live_go_producer.py::test_every_go_send_is_where_the_go_model_puts_it",
         "data/live/go-producer-outage-4", "data/live/go-producer-outage-5",
         "data/live/go-producer-outage-5.5")),
    Verdict(
        "go-producer", "RETRIED", "stored after failed attempts", VERDICT, "retried",
        "A Go send stored at the model's last attempt after attempts on stopped brokers failed: "
        "each failed attempt took the next queue, whatever its broker (2.1.2 does not skip the "
        "broker that failed), and a paused broker's waited out the 3 s timeout.",
        "the sync loop retries on a request error and 2.1.2 forgets the last broker (facts "
        "go.sync-loop-retries-request-errors, go.sync-retry-forgets-last-broker-since-2.1.2, "
        "go.sync-attempt-timeout-3s)",
        ("tests/test_live_go_producer.py::test_every_go_send_is_where_the_go_model_puts_it",
         "tests/test_live_go_producer.py::test_the_check_fails_under_the_java_retry_rule")),
    Verdict(
        "go-producer", "FAILED", "every attempt failed", VERDICT, "failed",
        "A Go send that failed, and the model's every attempt (one and `RetryTimes`, 3, more) "
        "met a stopped broker.",
        "the sync loop gives up after `RetryTimes` + 1 attempts (facts go.producer-with-retry, "
        "go.sync-loop-retries-request-errors)",
        ("tests/test_live_go_producer.py::test_every_go_send_is_where_the_go_model_puts_it",)),
    Verdict(
        "go-producer", "UNEXPLAINED", "unexplained", VERDICT, "unexplained",
        "A Go send stored where none of the model's possible attempts goes, or failed where "
        "one of them would have been stored; the counter is then re-synchronised on the "
        "stored queue.",
        "none: a disagreement with the model",
        ("tests/test_live_go_producer.py::test_the_check_fails_with_a_counter_that_starts_"
         "elsewhere",)),
    # ------------------------------------------------------------------ frozen and hung consumers
    Verdict(
        "consumer-model", "agree", "agree", VERDICT, None,
        "A frozen consumer (SIGSTOP) was dropped by each broker as the simulator's model "
        "says (the idle close 120 s after its last traffic, or the scan at the first 10 s tick "
        "after its heartbeat is 120 s old, whichever comes first); a hung listener's queue was "
        "consumed on to its end with the committed offset held at the hung message.",
        "facts broker.idle-close-notifies-group, broker.consumer-channel-expires-after-120s, "
        "broker.client-housekeeping-scan-10s, consumer.remove-message-returns-lowest-in-flight",
        ("tests/test_live_recordings.py::test_frozen_consumers_are_dropped_as_the_model_says",
         "tests/test_live_recordings.py::"
         "test_a_hung_listener_holds_the_committed_offset_and_its_queue_is_consumed_on",
         "data/live/frozen-consumers-5", "data/live/hung-listener-5")),
    Verdict(
        "consumer-model", "unexplained", "unexplained", VERDICT, None,
        "A drop or a queue the model does not explain; the row's `why` says how it differs.",
        "none: a disagreement with the simulator's model",
        ("tests/test_live_recordings.py::test_frozen_consumers_are_dropped_as_the_model_says",
         "data/live/frozen-consumers-5")),
)
"""Every verdict, label and reading, grouped by check in ``CHECKS``' order."""

_BY_KEY = {(v.check, v.name): v for v in VERDICTS}


def of_check(check: str) -> tuple[Verdict, ...]:
    """The verdicts of ``check`` (a ``Check.key``), in the registry's order."""
    return tuple(v for v in VERDICTS if v.check == check)


def text(check: str, name: str) -> str:
    """The value of the text verdict ``name`` of ``check`` (a ``KeyError`` if unregistered)."""
    value = _BY_KEY[(check, name)].value
    if not isinstance(value, str):
        raise TypeError(f"{check} {name} is a number, not a text")
    return value


def number(check: str, name: str) -> int:
    """The value of the numeric reading ``name`` of ``check``."""
    value = _BY_KEY[(check, name)].value
    if not isinstance(value, int):
        raise TypeError(f"{check} {name} is a text, not a number")
    return value
