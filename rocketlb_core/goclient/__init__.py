"""The Go client, ``github.com/apache/rocketmq-client-go/v2`` (issue 47, item 1): what it computes
for balancing, ported from its v2.1.2 sources and checked against vectors its own code made
(``rocketlb_core.vectorgen.go_client``; ``tests/vectors/go/``).

* ``allocate``: its six allocation strategies (``consumer/strategy.go``) and the order
  ``doBalance`` gives the queues and the client ids before it calls one;
* ``selector``: its producer's queue selectors (``producer/selector.go``), the default
  round-robin one and the sharding-key hash;
* ``route``: the order its producer (``routeData2PublishInfo``) and its consumer
  (``routeData2SubscribeInfo``) give a route's queues; ``gosort`` is Go's ``sort.Slice`` the
  first one runs;
* ``clientid``: its client id;
* ``conformance``: a vector record replayed on these.

Where the Go client computes what the Java client computes, the tests show it on the same inputs
(``tests/test_go_client.py``); where not, ``book/facts.toml`` holds the difference with its
evidence in the Go sources (ids ``go.*``).

Standard library only (it runs in the reader's browser).
"""
