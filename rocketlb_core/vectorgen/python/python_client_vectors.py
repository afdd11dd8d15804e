"""Vectors from rocketmq-python-client's own ``QueueSelector`` (run by
``rocketlb_core.vectorgen.python_client`` with the client's venv's Python, never imported by
the package).

``python python_client_vectors.py SEED CASES`` prints one JSON case a line. Each case builds a
route of protobuf ``MessageQueue``s (``rocketmq.grpc_protocol.definition_pb2``), wraps it in the
client's ``TopicRouteData``, seeds the module ``random`` (the selector's start is
``random.randint(1, 1000)``) and makes the selector the client makes (``producer_queue_selector``,
``simple_consumer_queue_selector`` or ``lite_simple_consumer_queue_selector``), then runs a
sequence of its operations, recording each answer (``[broker, broker id, queue id]``, a list
of them for ``all_queues``, ``null`` for ``update``) or the exception's type."""

import json
import random
import sys
from typing import Any

# rocketmq-python-client is imported inside the functions: the package's own tests import this
# module (doctests, layers) where the client is not installed.

TOPIC = "TopicTest"
NAMES = ["broker-a", "broker-b", "broker-c", "broker-d", "b\u00f6rse-1", "\u4ee3\u7406-2"]
KEYS = ["", "order-1", "order-2", "GID-\u00e9t\u00e9", "\u8ba2\u5355-42", "\U0001f600-emoji",
        "x" * 300]
KINDS = ("producer", "simple_consumer", "lite_simple_consumer")


def draw_route(rng: random.Random) -> list[list[Any]]:
    """``[broker, broker id, queue id, permission]`` rows, as the Proxy's route lists them:
    per broker (and per slave, now and then) its queues ``0 .. n - 1``, sometimes shuffled."""
    rows = []
    for name in rng.sample(NAMES, rng.randint(0 if rng.random() < 0.05 else 1, 4)):
        for broker_id in [0] + ([1] if rng.random() < 0.2 else []) + \
                ([2 ** 31 - 1] if rng.random() < 0.03 else []):
            perm = rng.choice([4, 4, 4, 2, 3, 1, 0])
            for q in range(rng.randint(1, 8)):
                p = perm if rng.random() < 0.85 else rng.randint(0, 4)
                rows.append([name, broker_id if rng.random() > 0.02 else 0, q, p])
    if rng.random() < 0.3:
        rng.shuffle(rows)
    return rows


def to_route(rows: list[list[Any]]) -> Any:
    from rocketmq.grpc_protocol import definition_pb2 as pb
    from rocketmq.v5.model import TopicRouteData

    queues = [pb.MessageQueue(topic=pb.Resource(name=TOPIC), id=q, permission=p,
                              broker=pb.Broker(name=b, id=i, endpoints=pb.Endpoints(
                                  scheme=pb.IPv4,
                                  addresses=[pb.Address(host="127.0.0.1", port=8081)])),
                              accept_message_types=[pb.NORMAL])
              for b, i, q, p in rows]
    return TopicRouteData(queues)


def short(mq: Any) -> list[Any]:
    """The client's ``MessageQueue`` as it sends it (``message_queue0``: its protobuf)."""
    q = mq.message_queue0()
    return [q.broker.name, q.broker.id, q.id]


def main() -> None:
    from rocketmq.v5.client.balancer import QueueSelector

    seed, cases = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    for n in range(cases):
        rows = draw_route(rng)
        kind = rng.choice(KINDS)
        start_seed = rng.randrange(2 ** 32)
        random.seed(start_seed)
        selector = getattr(QueueSelector, f"{kind}_queue_selector")(to_route(rows))
        ops: list[dict[str, Any]] = []
        expect: list[Any] = []
        for _ in range(rng.randint(1, 40)):
            r = rng.random()
            op: dict[str, Any]
            got: Any
            if r < 0.6:
                op = {"op": "next"}
            elif r < 0.8:
                op = {"op": "hash", "key": rng.choice(KEYS) + (str(rng.randint(0, 999))
                                                             if rng.random() < 0.5 else "")}
            elif r < 0.9:
                op = {"op": "all"}
            else:
                op = {"op": "update", "route": draw_route(rng)}
            ops.append(op)
            try:
                if op["op"] == "next":
                    got = short(selector.select_next_queue())
                elif op["op"] == "hash":
                    got = short(selector.select_queue_by_hash_key(op["key"]))
                elif op["op"] == "all":
                    got = [short(q) for q in selector.all_queues()]
                else:
                    got = selector.update(to_route(op["route"]))
            except Exception as exc:        # the client's own failure is the answer
                got = {"error": type(exc).__name__}
            expect.append(got)
        print(json.dumps({"id": f"python-client-5.1.2-{n:05d}", "grpc": "python-selector",
                          "source": {"package": "rocketmq-python-client", "version": "5.1.2",
                                     "class": "rocketmq.v5.client.balancer.QueueSelector",
                                     "seed": seed,
                                     "python": "{}.{}".format(*sys.version_info[:2])},
                          "kind": kind, "random_seed": start_seed, "route": rows,
                          "ops": ops, "expect": expect}, ensure_ascii=False,
                         separators=(",", ":")))


if __name__ == "__main__":
    main()
