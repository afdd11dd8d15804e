"""Every kind of finding ``rocketlb doctor`` reports, in one registry (issue 50): its id, the
severities it may have, what it finds, the inputs it reads, the spec section behind it, the
book section its finding links to, the tests that show it, and the answers of the page
"Questions operators ask" (``book/questions.md``) about its symptom. ``Finding`` (``findings``)
refuses an id or a severity this does not register; the book's page
``book/guide/doctor-findings.md`` is generated from it (``rocketlb_core.docs_cli``), and
``tests/test_doctor_kinds.py`` holds the registry and the checks' code to each other.

Standard library only.

>>> KINDS["duplicate-client-id"].severities
('critical',)
>>> [k.id for k in FINDINGS if k.about == "route"]
['broker-write-only', 'broker-read-only']
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("critical", "warning", "info")
"""From the most severe; the report lists findings in this order."""

ABOUT = {"group": "A consumer group", "client": "The clients' versions",
         "producer": "A producer", "route": "A topic's route"}
"""What a finding is about, in the page's order, and its section's title."""


@dataclass(frozen=True)
class FindingKind:
    """One kind of finding. ``finds``: what the doctor found and why it matters (from the
    finding's explanation); ``reads``: the inputs it comes from; ``spec``: the spec sections
    of ``rocketmq-load-balancing.md`` behind it; ``book``: the chapter section every finding
    of the kind links to (``notebooks/NN-name.ipynb#anchor``); ``shown_by``: the tests
    (``tests/FILE.py::FUNCTION``) that show it; ``questions``: the answers of the book's page
    "Questions operators ask" (``QUESTIONS``) about the finding's symptom, each by the MyST
    target ``(asked-REPO-NUMBER)=`` that stands above its question there (the built page's id
    of that paragraph), in the order a finding lists them; empty, with a comment saying why,
    where no answer fits. An answer that says the book does not cover its question yet is
    linked only where its question has the finding's symptom and it points to a section about
    it (a comment says so)."""

    id: str
    severities: tuple[str, ...]
    about: str
    finds: str
    reads: str
    spec: str
    book: str
    shown_by: tuple[str, ...]
    questions: tuple[str, ...]


def _book(notebook: str, anchor: str) -> str:
    return f"notebooks/{notebook}.ipynb#{anchor}"


QUESTIONS = "book/questions.md"
"""The page of operators' questions, from the repository's root (as ``book`` names a chapter)."""


def question_links(kind: FindingKind) -> list[str]:
    """``kind``'s answers as links from the repository's root, ``book/questions.md#anchor``.

    >>> question_links(KINDS["queue-0-skew"])
    ['book/questions.md#asked-rocketmq-5672']
    """
    return [f"{QUESTIONS}#{a}" for a in kind.questions]


FINDINGS: tuple[FindingKind, ...] = (
    FindingKind(
        "duplicate-client-id", ("critical",), "group",
        "Several processes of a group report one client id: each finds its own position in "
        "the sorted id list with `indexOf`, the first copy, so they take the same queues "
        "(consumed twice) and the later copies' share is consumed by nobody.",
        "the group's members (`consumerConnection`, else broker logs, else client logs), the "
        "topic's queues",
        "spec 1.2, 3.1", _book("09-troubleshooting", "duplicate-client-ids-in-containers"),
        ("tests/test_doctor.py::"
         "test_the_duplicate_instance_name_of_a_recording_is_found_with_its_queues",
         "tests/test_doctor.py::test_captures_duplicate_instance_name"),
        # client-go#536 (Go consumers on one docker0 IP): not covered yet, points to chapter 9
        questions=("asked-rocketmq-1547", "asked-rocketmq-2760", "asked-rocketmq-667",
                   "asked-rocketmq-3480", "asked-rocketmq-spring-387",
                   "asked-rocketmq-client-go-536")),
    FindingKind(
        "more-consumers-than-queues", ("warning",), "group",
        "A group has more members than its topic has readable queues: every strategy that "
        "computes shares gives each queue to one member, so some members get nothing.",
        "the group's members, the topic's queues", "spec 3.1, 3.2",
        _book("09-troubleshooting", "queues-idle-after-a-scale-out"),
        ("tests/test_doctor.py::test_captures_idle_member",),
        # #4483 (thousands of autoscaled consumers): not covered yet, points to pop (chapter 5)
        questions=("asked-rocketmq-9004", "asked-rocketmq-4483")),
    FindingKind(
        "different-subscriptions", ("critical",), "group",
        "The members of a group subscribe different topics, or one topic with different "
        "expressions: a non-subscriber's share of the topic is read by no one, and the broker "
        "filters every member's pulls with the one expression it keeps.",
        "client logs (each member's rebalances and heartbeat subscriptions), "
        "`consumerConnection`", "spec 4.1, 5.1",
        _book("04-consumers-and-heartbeats", "inside-a-heartbeat-registerconsumer"),
        ("tests/test_doctor.py::test_captures_mixed_subscriptions",
         "tests/test_doctor_live_groups.py::"
         "test_different_tags_on_one_topic_with_the_queues_that_lose_messages"),
        questions=("asked-rocketmq-351",)),
    FindingKind(
        "mixed-strategies", ("critical",), "group",
        "The members of a group allocate a topic with different strategies: each computes "
        "only its own share, assuming the others use its strategy, so the shares overlap and "
        "leave gaps.",
        "client logs (the strategy each `rebalanced result changed` line names)", "spec 3.1",
        _book("05-allocation-strategies", "a-group-must-agree-on-the-strategy"),
        ("tests/test_doctor_inputs.py::test_mixed_strategies_are_found_with_the_queues_they_leave",
         "tests/test_doctor_live_groups.py::test_a_fresh_capture_of_mixed_strategies_is_diagnosed"),
        # the only question about it: client-go#419 (Java and Go members of one group), not
        # covered yet, points to this section
        questions=("asked-rocketmq-client-go-419",)),
    FindingKind(
        "mixed-clients", ("critical",), "group",
        "The members of a group run the Java and the Go client, and their strategies compute "
        "different shares (the Go client's consistent hash builds another ring than Java's): "
        "each computes only its own share, so the shares overlap and leave gaps.",
        "client logs (the strategy each Java `rebalanced result changed` line names; each Go "
        "member's strategy inferred from its `MessageQueue do balance done` share)",
        "spec 3.1, 3.7",
        _book("05-allocation-strategies", "mixed-clients"),
        ("tests/test_doctor_go.py::test_a_mixed_group_on_the_consistent_hash_is_found",),
        questions=("asked-rocketmq-client-go-419",)),
    FindingKind(
        "grpc-beside-remoting", ("critical",), "group",
        "A group has remoting and gRPC push consumers of one topic at once: the remoting "
        "members share every queue among themselves (a cluster-mode Proxy lists its gRPC "
        "clients in no broker's table), and the Proxy gives each gRPC member every queue too.",
        "client logs (a remoting member's `rebalanced result changed` lines; a gRPC Java "
        "client's `consumerGroup=` and `Assignments of topic=... has changed` lines)",
        "spec 5.1, 6",
        _book("11-rocketmq5-clients", "grpc-in-remoting-group"),
        ("tests/test_doctor_grpc.py::test_a_group_of_remoting_and_grpc_consumers_is_found",
         "tests/test_doctor_grpc.py::test_grpc_groups_without_remoting_members_are_not_found"),
        # no collected question asks it: the closest, rocketmq#5312 (4.x to 5.x), asks about
        # producers and upgrades, not a group shared by both clients
        questions=()),
    FindingKind(
        "unowned-queues", ("critical", "warning"), "group",
        "`consumerProgress -s true` shows queues no member pulls, and no other finding "
        "explains them; critical when messages wait there.",
        "`consumerProgress -s true`", "spec 4.1",
        _book("09-troubleshooting", "duplicate-client-ids-in-containers"),
        ("tests/test_doctor_kinds.py::test_a_queue_no_member_owns_is_reported",),
        questions=("asked-rocketmq-1547", "asked-rocketmq-2760", "asked-rocketmq-2837",
                   "asked-rocketmq-426", "asked-rocketmq-1467")),
    FindingKind(
        "doubly-owned-queues", ("critical",), "group",
        "Two members' logged assignments claimed the same queues at once for longer than a "
        "rebalance takes to settle: both pulled them, and their messages were consumed twice.",
        "client logs (each member's last assignment)", "spec 4.1",
        _book("09-troubleshooting", "messages-consumed-twice-around-a-rebalance"),
        ("tests/test_doctor_inputs.py::test_two_members_claiming_one_queue_for_long_is_found",),
        questions=("asked-rocketmq-2837", "asked-rocketmq-1095", "asked-rocketmq-1467")),
    FindingKind(
        "rebalance-storm", ("warning",), "group",
        "Members changed their queues of a topic more than ten times a minute: the membership "
        "or the route kept changing, and each change drops queues and their in-flight "
        "messages.",
        "client logs (`rebalanced result changed` lines)", "spec 4.2, 5.2",
        _book("06-rebalance-in-motion", "the-flow-of-one-rebalance"),
        ("tests/test_doctor_producers.py::"
         "test_a_rebalance_storm_is_over_the_threshold_per_minute",
         "tests/test_doctor_producers.py::test_a_log_out_of_time_order_is_no_storm"),
        # #351's answer: a group whose members subscribe differently "rebalances every few
        # seconds"; no other answer is about rebalances that keep coming
        questions=("asked-rocketmq-351",)),
    FindingKind(
        "mixed-client-versions", ("info",), "client",
        "The members of a group run different client versions: allocation is the same, but "
        "defaults differ, and a stalled rolling upgrade leaves the group mixed.",
        "`consumerConnection` (each connection's version), client logs", "spec 11",
        _book("05-allocation-strategies", "a-group-must-agree-on-the-strategy"),
        ("tests/test_doctor_kinds.py::test_members_on_two_client_versions_are_reported",),
        # none: no question of the page is about a group whose members run different
        # client versions (the upgrade questions, apache/rocketmq#5312 and #459, are not
        # covered yet, and their answers link nowhere)
        questions=()),
    FindingKind(
        "known-bug-rewritten-queue-list", ("warning",), "client",
        "Producers on 4.7.1 to 4.9.7 or 5.0.0 to 5.1.3 (#7779): with "
        "`sendLatencyFaultEnable` on and no broker available, the least-bad pick overwrites a "
        "queue of the shared list, and sends pile onto one queue.",
        "client logs (the version a producer's client instance logs)", "spec 2.4, 2.4a",
        _book("03-latency-fault-tolerance", "before-4-9-8-the-queue-list-rewritten"),
        ("tests/test_doctor_kinds.py::test_a_producer_on_a_version_that_rewrites_its_queue_list"
         "_is_reported",),
        questions=("asked-rocketmq-7779",)),
    FindingKind(
        "known-bug-permanent-avoidance", ("warning",), "client",
        "Producers on 5.1.4 (#7812): with `sendLatencyFaultEnable` on, an error reply that "
        "marked a broker unreachable avoids it until the producer restarts.",
        "client logs (the version a producer's client instance logs)", "spec 2.5",
        _book("09-troubleshooting", "a-broker-avoided-for-ten-minutes-after-one-slow-reply"),
        ("tests/test_doctor_inputs.py::test_a_known_bug_version_of_a_producer_is_reported",),
        questions=("asked-rocketmq-7812",)),
    FindingKind(
        "broker-isolated", ("warning", "info"), "producer",
        "A producer's fault strategy took a broker out of selection after failed attempts, "
        "for as long as the core's `MQFaultStrategy` computes for the client's line (600 s "
        "on 4.x: a warning; 10 s from 5.1.4: information).",
        "client logs (`sendKernelImpl exception` lines), checked against the message trace",
        "spec 2.3, 2.4, 2.5, 2.6",
        _book("09-troubleshooting", "a-broker-avoided-for-ten-minutes-after-one-slow-reply"),
        ("tests/test_doctor_producers.py::"
         "test_a_4x_timeout_isolates_broker_a_for_600_s_and_the_trace_agrees",
         "tests/test_doctor_producers.py::"
         "test_5x_isolations_last_10_s_and_end_before_the_next_failure"),
        questions=("asked-rocketmq-7812",)),
    FindingKind(
        "failing-broker-not-avoided", ("warning",), "producer",
        "A producer's failed attempts at a broker began inside the isolation an earlier one "
        "would have set: `sendLatencyFaultEnable` is off, so every pick of that broker costs "
        "an attempt and a retry.",
        "client logs (`sendKernelImpl exception` lines), the message trace", "spec 2.3, 2.6",
        _book("03-latency-fault-tolerance", "a-simulated-outage-with-the-switch-off-and-on"),
        ("tests/test_doctor_producers.py::"
         "test_a_4x_producer_with_the_switch_off_kept_sending_to_the_failing_broker",
         "tests/test_doctor_producers.py::"
         "test_repeated_failures_inside_the_window_mean_the_switch_was_off"),
        questions=("asked-rocketmq-3484", "asked-rocketmq-4720", "asked-rocketmq-3929")),
    FindingKind(
        "queue-0-skew", ("warning",), "producer",
        "Queue 0 of a broker holds more than twice its share of the topic's messages: 4.x "
        "producers (and 5.0.0 to 5.1.3) with fault tolerance on pile onto the first "
        "available queue after isolated ones (#5672).",
        "`consumerProgress` (the queues' broker offsets)", "spec 2.4",
        _book("03-latency-fault-tolerance", "where-an-isolated-broker-s-share-goes-queue-0"),
        ("tests/test_doctor_producers.py::test_queue_0_skew_from_broker_offsets",
         "tests/test_doctor_replayed.py::"
         "test_queue_0_skew_goes_away_on_the_replayed_day_with_the_switch_off"),
        questions=("asked-rocketmq-5672",)),
    FindingKind(
        "broker-write-only", ("critical", "warning"), "route",
        "A route entry without READ: its queues are in no consumer's queue set, so no group "
        "reads them; critical while producers still write there.",
        "`topicRoute` (each broker's `perm`), `consumerProgress`", "spec 1.4",
        _book("01-the-cluster", "one-route-two-views"),
        ("tests/test_doctor_producers.py::"
         "test_a_write_only_broker_hides_its_queues_from_consumers",),
        questions=("asked-rocketmq-3465",)),
    FindingKind(
        "broker-read-only", ("critical", "info"), "route",
        "A route entry without WRITE: producers leave its queues out, and the other brokers "
        "take its share (how a broker is drained); critical when no broker is writable.",
        "`topicRoute` (each broker's `perm`)", "spec 1.3",
        _book("01-the-cluster", "one-route-two-views"),
        ("tests/test_doctor_producers.py::test_a_read_only_broker_takes_no_sends",),
        questions=("asked-rocketmq-3465",)),
)
"""Every kind of finding, grouped by ``about`` in ``ABOUT``'s order."""

KINDS = {k.id: k for k in FINDINGS}
