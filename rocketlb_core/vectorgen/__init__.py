"""Conformance vectors made here from upstream's released jars (issue 34), like ``kafka.vectors``.

* ``remoting``: the remoting producer's selection on the newest lines (``rocketmq-client`` 5.4.0
  and 5.5.0): the 5.3.3 scenarios replayed on each release's own ``MQFaultStrategy``
  (``java/rocketlb/ProducerReplay.java``), the fault table's wall clock redirected by
  ``java/ClockRewrite.java``; written to ``tests/vectors/rocketmq/``.
* ``grpc`` (issue 34, item 2): the gRPC client's balancing (``rocketmq-client-java`` 5.0.8's
  ``PublishingLoadBalancer``, ``SubscriptionLoadBalancer``, the ``ProducerImpl`` retry loop,
  Guava's SipHash-2-4) and the broker's ``allocate4Pop`` (``java/rocketlb/GrpcVectors.java``),
  written to ``tests/vectors/grpc/``.
* ``proxy`` (issue 34, item 2): the push consumer's assignment as the servers compute it, on
  rocketmq-proxy 5.3.3 and 5.5.0's class path: the Proxy's ``RouteActivity.queryAssignment``
  (``java/rocketlb/ProxyAssignmentVectors.java``) and the broker's ``QueryAssignmentProcessor``
  (``java/rocketlb/BrokerAssignmentVectors.java``), written to
  ``tests/vectors/grpc/{proxy,broker}-assignment-<version>.jsonl.gz``.

Not core (they run Maven and Java); the ports they check are (``rocketlb_core.grpc``).
"""
