"""The conformance vectors' families, in one registry (issue 50): for each kind of record
``rocketlb conformance`` reads (``runner._kind_of``; a gRPC record's own ``grpc`` family), the
files that hold it, the port it checks, the upstream classes and releases that made it, the
spec section, and the tests that run it. The book's page
``book/guide/conformance-families.md`` is generated from it (``rocketlb_core.docs_cli``);
``tests/test_registry_pages.py`` holds it to the runner (every kind and gRPC family it
dispatches is here, and nothing else), to ``tests/vectors/`` (every file is of exactly one
family, each family has files, and each file's first record is of its family) and to the tests
it cites.

Standard library only.

>>> [f.name for f in FAMILIES if f.kind == "grpc"][:2]
['grpc: publishing', 'grpc: subscription']
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One family of vectors. ``kind``: the runner's name for its records (what a report
    prints); ``grpc``: a gRPC record's ``grpc`` field (``None`` for the others); ``files``:
    glob patterns under ``tests/vectors/`` (``../shared/conformance`` holds the same public
    files uncompressed); ``port``: the package's modules it checks; ``upstream``: what made
    the expected values; ``spec``: the section of ``rocketmq-load-balancing.md``, or ``-``
    where it is not RocketMQ's client; ``shown_by``: the tests that run it."""

    kind: str
    grpc: str | None
    files: tuple[str, ...]
    what: str
    port: str
    upstream: str
    spec: str
    shown_by: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.kind if self.grpc is None else f"grpc: {self.grpc}"


FAMILIES: tuple[Family, ...] = (
    Family(
        "producer", None,
        ("producer-4.7.1.jsonl.gz", "producer-4.9.7.jsonl.gz", "producer-4.9.8.jsonl.gz",
         "producer-5.3.3.jsonl.gz", "rocketmq/producer-*.jsonl.gz"),
        "A producer scenario per line: a route, brokers failing and recovering, and every "
        "selection, fault report and send of the loop, step by step.",
        "`producer` (`MQFaultStrategy`, `TopicPublishInfo`, the send loop)",
        "rocketmq-client 4.7.1, 4.9.7, 4.9.8, 5.3.3 (tags), 5.4.0, 5.5.0 (Maven Central)",
        "spec 2.1, 2.2, 2.3, 2.4, 2.4a, 2.5, 2.6",
        ("tests/test_conformance.py::test_every_producer_expectation_holds",
         "tests/test_newest_lines.py::test_the_new_files_pass_on_their_line")),
    Family(
        "primitives", None, ("producer-primitives.jsonl.gz",),
        "The producer's building blocks alone: `ThreadLocalIndex` and the latency to "
        "not-available duration table.",
        "`producer.index`, `producer.tables`",
        "rocketmq-client 4.9.8 (4.9.7 the same)", "spec 2.1, 2.3",
        ("tests/test_conformance.py::test_primitives",)),
    Family(
        "allocation", None, ("allocation-*.jsonl.gz",),
        "Each allocation strategy (and 5.x's `allocate4Pop`) on generated groups: every "
        "consumer's share of every view.",
        "`consumer` (the registry's upstream strategies), `consumer.pop`",
        "rocketmq-client 4.9.8 (4.9.7, 5.3.3 and develop the same)",
        "spec 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 6",
        ("tests/test_conformance.py::test_every_allocation_case_holds",
         "tests/test_conformance.py::test_allocation_files_cover_every_upstream_strategy")),
    Family(
        "upstream-tests", None, ("upstream-tests.json.gz",),
        "Upstream's own unit tests of load balancing (the strategies, the fault table, "
        "`ThreadLocalIndex`, the rebalance, a route's publish list), their inputs and what "
        "they assert, as data.",
        "`consumer`, `producer`, `model`",
        "apache/rocketmq's tests at rocketmq-all-4.9.8, 5.3.3 and develop",
        "spec 1.3, 2.1, 2.4, 2.5, 3, 4.1, 5.1",
        ("tests/test_conformance.py::test_upstream_producer_tests",)),
    Family(
        "kafka-assignor", None,
        tuple(f"kafka/kafka-{a}-*.jsonl.gz" for a in (
            "range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range")),
        "Kafka's consumer-group assignors, client-side and KIP-848's server-side, on "
        "generated groups (racks, histories, colliding hashes, vanished topics).",
        "`kafka.assignors`, `kafka.sticky_general`, `kafka.uniform_heterogeneous`",
        "kafka-clients 3.4.0, 4.3.1; kafka-group-coordinator 4.0.0, 4.3.1 (Java 17 and 25)",
        "-", ("tests/test_kafka.py::test_every_vector_passes",)),
    Family(
        "kafka-partitioner", None, ("kafka/kafka-partitioner*.jsonl.gz",),
        "Kafka's producer partitioner: the sticky `BuiltInPartitioner` with KIP-794's "
        "weights, and murmur2 for keys, with metadata that changes.",
        "`kafka.partitioner`", "kafka-clients 4.3.1 (3.9.1, 3.4.0 the same)", "-",
        ("tests/test_kafka.py::test_every_vector_passes",)),
    Family(
        "grpc", "publishing", ("grpc/grpc-publishing-*.jsonl.gz",),
        "The gRPC producer's `PublishingLoadBalancer`: its queues, counter and "
        "`takeMessageQueues` with isolated endpoints.",
        "`grpc.publishing`", "rocketmq-client-java 5.0.8", "-",
        ("tests/test_grpc.py::test_every_grpc_vector_holds",)),
    Family(
        "grpc", "subscription", ("grpc/grpc-subscription-*.jsonl.gz",),
        "The gRPC simple consumer's `SubscriptionLoadBalancer`: one queue per receive.",
        "`grpc.subscription`", "rocketmq-client-java 5.0.8", "-",
        ("tests/test_grpc.py::test_every_grpc_vector_holds",)),
    Family(
        "grpc", "send", ("grpc/grpc-send-*.jsonl.gz",),
        "The gRPC producer's send loop: candidates once, one per attempt, isolation after a "
        "failure.",
        "`grpc.send`", "rocketmq-client-java 5.0.8", "-",
        ("tests/test_grpc.py::test_every_grpc_vector_holds",)),
    Family(
        "grpc", "siphash", ("grpc/grpc-siphash-*.jsonl.gz",),
        "A message group's queue: Guava's SipHash-2-4 of the group, then its index.",
        "`grpc.siphash`", "rocketmq-client-java 5.0.8", "-",
        ("tests/test_grpc.py::test_every_grpc_vector_holds",)),
    Family(
        "grpc", "proxy-assignment", ("grpc/proxy-assignment-*.jsonl.gz",),
        "The Proxy's answer to a push consumer's `queryAssignment`, whole.",
        "`grpc.assignment`", "rocketmq-proxy 5.3.3, 5.5.0 (`RouteActivity`)", "spec 6",
        ("tests/test_grpc_assignment_vectors.py::test_every_assignment_vector_holds",)),
    Family(
        "grpc", "broker-assignment", ("grpc/broker-assignment-*.jsonl.gz",),
        "The broker's `QUERY_ASSIGNMENT`: the assignments of a group in pop or pull mode.",
        "`grpc.assignment`", "rocketmq-broker 5.3.3, 5.5.0 (`QueryAssignmentProcessor`)",
        "spec 6",
        ("tests/test_grpc_assignment_vectors.py::test_every_assignment_vector_holds",)),
    Family(
        "grpc", "proxy-group-queue", ("grpc/proxy-group-queue-*.jsonl.gz",),
        "The Proxy's queue for a gRPC send: its own write selector, or a message group's "
        "consistent hash.",
        "`grpc.proxy_send`", "rocketmq-proxy 5.3.3, 5.5.0 (`SendMessageActivity`)", "-",
        ("tests/test_grpc_proxy_group.py::test_every_group_queue_vector_holds",)),
    Family(
        "grpc", "python-selector", ("grpc/python-client-*.jsonl.gz",),
        "rocketmq-python-client's `QueueSelector`: a route, a selector kind and its start, "
        "then its operations.",
        "`grpc.python_client`", "rocketmq-python-client 5.1.2 (PyPI)", "-",
        ("tests/test_grpc_python_client.py::"
         "test_every_operation_answers_as_the_clients_own_selector",)),
    Family(
        "go-client", None, ("go/go-client-*.jsonl.gz",),
        "The Go client's own code: its allocation strategies, its producer's queue selectors, "
        "the order its producer and consumer give a route's queues, its client id.",
        "`goclient`", "rocketmq-client-go v2.1.2 (Go module proxy; built with go1.26.8)",
        "spec 2.1, 3.2, 3.3, 3.5, 3.7",
        ("tests/test_go_client.py::test_every_go_vector_holds",)),
)
"""Every family, in the page's order."""
