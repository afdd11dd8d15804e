"""rocketlb live driver: the gRPC producer of rocketmq-python-client (apache/rocketmq-clients
``python/``, from PyPI), sending through a Proxy; the Python twin of ``live/java/GrpcProduce.java``
with the same arguments and rows. Run by the client's own venv's Python, never imported::

    python grpc_produce.py ENDPOINTS TOPIC COUNT INTERVAL_MS GO_FILE -D<marker>=<home>

Starts (its route and settings fetched from the Proxy), prints ``{"started": CLIENT_ID}``, waits
until GO_FILE exists, then sends COUNT messages synchronously (body ``m<seq>``, key
``seq-<seq>``), one every INTERVAL_MS, printing one JSON object per send::

    {"seq": 0, "sent_ms": ..., "status": "SEND_OK", "client_broker": "broker-a",
     "client_queue": 3, "offset": 12, "msg_id": "01...", "cost_ms": 2}
    {"seq": 1, "sent_ms": ..., "error": "...", "cost_ms": 9004}

then ``{"done": COUNT}``. The receipt's queue is the one the *client* chose for the attempt that
succeeded (``Producer.__handle_send_result`` hands back ``topic_queue``), as in Java; the Proxy
stores the message where it decides (``grpc.proxy_send``). The number of attempts comes from the
Proxy's settings (``reset_setting``: its backoff policy's ``max_attempts``, 3 by
``ProxyConfig.grpcClientProducerMaxAttempts``). The client logs under ``~/logs/rocketmq_python``:
the recorder runs it with ``HOME`` set to the producer's folder. The last argument only carries
the cluster's marker, so ``live.down`` knows the process as the cluster's.
"""

import json
import sys
import time
from pathlib import Path


def main() -> int:
    endpoints, topic = sys.argv[1], sys.argv[2]
    count, interval_ms, go = int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    from rocketmq import ClientConfiguration, Credentials, Message, Producer

    producer = None
    for tries in range(1, 6):             # a start on a loaded host may time out: try again
        candidate = Producer(ClientConfiguration(endpoints, Credentials(), request_timeout=3),
                             (topic,))
        try:
            candidate.startup()
            producer = candidate
            break
        except Exception as exc:          # the client's own error, said and tried again
            print(f"start {tries} failed, trying again: {exc}", file=sys.stderr, flush=True)
            time.sleep(1)
    if producer is None:
        return 1
    print(json.dumps({"started": producer.client_id}), flush=True)
    while not go.exists():
        time.sleep(0.01)
    try:
        for i in range(count):
            start = int(time.time() * 1000)
            msg = Message()
            msg.topic = topic
            msg.tag = "rocketlb"
            msg.keys = f"seq-{i}"
            msg.body = f"m{i}".encode()
            try:
                r = producer.send(msg)
                q = r.message_queue.message_queue0()
                row = {"seq": i, "sent_ms": start, "status": "SEND_OK",
                       "client_broker": q.broker.name, "client_queue": q.id,
                       "offset": r.offset, "msg_id": r.message_id,
                       "cost_ms": int(time.time() * 1000) - start}
            except Exception as exc:      # the send failed: its error is the row
                row = {"seq": i, "sent_ms": start, "error": f"{type(exc).__name__}: {exc}",
                       "cost_ms": int(time.time() * 1000) - start}
            print(json.dumps(row), flush=True)
            if interval_ms > 0:
                time.sleep(interval_ms / 1000)
    finally:
        producer.shutdown()
    print(json.dumps({"done": count}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
