"""Kafka's balancing, ported and checked against Kafka's own released classes (issue 16), so the
same recorded day can be replayed under RocketMQ's and Kafka's algorithms side by side.

``assignors`` (core: standard library only) holds the client-side consumer assignors;
``conformance`` checks a vector against them; ``vectors`` makes the vectors by running
kafka-clients' classes resolved through Maven (``tests/vectors/README.md``).
"""
