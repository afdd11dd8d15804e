// rocketlb live driver: upstream's own DefaultMQProducer, run with the client jars of one
// RocketMQ line on the class path (single-file source launch, Java 11+; DRIVER: Driver.java
// compiled, what every driver shares):
//
//   java -cp DRIVER:CLIENT_JARS Produce.java NAMESRV TOPIC GROUP COUNT INTERVAL_MS FAULT(on|off) INSTANCE
//        TRACE(on|off) GO_FILE [MODE(sync|hash|oneway|batch|async) [KEYS [THREADS [BATCH
//        [RETRY_NOT_STORED(on|off) [NAMED(on|off) [BACK_PRESSURE]]]]]]]
//
// Starts, prints {"started":CLIENT_ID}, waits until GO_FILE exists (so several producers and a
// scenario's clock start together), then sends COUNT messages synchronously, one every
// INTERVAL_MS, and prints one JSON object per
// send on stdout: {"seq":0,"sent_ms":...,"status":"SEND_OK","broker":"broker-a","queue":3,
// "msg_id":"7F00...","cost_ms":2} or {"seq":1,"sent_ms":...,"error":"..."}; then {"done":COUNT}. This is the
// ground truth of issue 14: where the real client put every message. With TRACE on, the client's
// own message trace (enableMsgTrace) writes a Pub record of every successful send to
// RMQ_SYS_TRACE_TOPIC, as a real cluster's clients do.
//
// MODE (issue 45) is how the application sends: "sync" (send(msg), the default), "hash" (an
// ordered send, send(msg, new SelectMessageQueueByHash(), key) with key "k" + seq % KEYS; the
// row adds "key") or "oneway" (sendOneway(msg): no result, so the row has "oneway":true and
// the time the call took; the body is INSTANCE + "/m" + seq, so a dump of the topic finds
// where each one was stored), or "batch" (send(Collection) of BATCH messages, bodies "m" + seq
// + "." + k, in one request to one queue: the row adds "batch" and its msg_id lists the
// messages' ids, comma-separated, as upstream's SendResult does).
//
// RETRY_NOT_STORED on (issue 45) sets retryAnotherBrokerWhenNotStoreOK: a reply other than
// SEND_OK is retried on another broker, and the row is the last reply's. NAMED on gives every
// message the oneway body, INSTANCE + "/m" + seq, so a dump of the topic tells whose each
// stored copy is (a master that answered SLAVE_NOT_AVAILABLE had written the message).
// BACK_PRESSURE N (async, 5.x; 0: off) sets enableBackpressureForAsyncMode and
// backPressureForAsyncSendNum N: send(msg, callback) first takes one of N permits on the
// calling thread, for at most the send's timeout.
//
// "async" (send(msg, callback): the call hands the message to the producer's
// AsyncSenderExecutor_N pool and returns; the row is printed by the callback, so rows come in
// the order the sends ended. A SendMessageHook notes each message's first hop as the executor
// thread makes it, and the row adds "executor" (that thread's name), "first_broker",
// "first_queue" and "first_ms" (when the hook ran); a retry re-sends the same request from the
// callback, to another broker at the first hop's queue id, and runs no hook. After the last
// send the driver waits for every callback, up to 60 s.)
//
// THREADS (issue 45, default 1) is how many application threads share the producer: with more
// than one, threads "send-0" ... each send the messages whose seq % THREADS is their number,
// one every INTERVAL_MS, and each row adds "thread" (the number). Upstream's queue counter is
// a ThreadLocalIndex: every thread that sends has its own, from its own random start.
import org.apache.rocketmq.client.hook.SendMessageContext;
import org.apache.rocketmq.client.hook.SendMessageHook;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.selector.SelectMessageQueueByHash;
import org.apache.rocketmq.common.message.Message;
import java.nio.charset.StandardCharsets;

public class Produce extends Driver {
    // mode "async": each message's first hop as the hook saw it, by body ("m" + seq), and the
    // callbacks still to come
    static final java.util.concurrent.ConcurrentHashMap<String, String> FIRST =
        new java.util.concurrent.ConcurrentHashMap<>();
    static java.util.concurrent.CountDownLatch pending;

    static void hookFirstHops(DefaultMQProducer producer) {
        producer.getDefaultMQProducerImpl().registerSendMessageHook(new SendMessageHook() {
            @Override
            public String hookName() {
                return "rocketlb-first-hop";
            }

            @Override
            public void sendMessageBefore(SendMessageContext context) {
                if (context.getMq() == null || context.getMessage() == null) { return; }
                String body = new String(context.getMessage().getBody(), StandardCharsets.UTF_8);
                FIRST.putIfAbsent(body, ",\"executor\":" + quote(Thread.currentThread().getName())
                    + ",\"first_broker\":" + quote(context.getMq().getBrokerName())
                    + ",\"first_queue\":" + context.getMq().getQueueId()
                    + ",\"first_ms\":" + System.currentTimeMillis());
            }

            @Override
            public void sendMessageAfter(SendMessageContext context) {
            }
        });
    }

    // one asynchronous send: its row is printed by the callback
    static void sendAsync(DefaultMQProducer producer, String topic, int i) {
        long start = System.currentTimeMillis();
        String body = "m" + i;
        Message msg = new Message(topic, "rocketlb", body.getBytes(StandardCharsets.UTF_8));
        String head = "{\"seq\":" + i + ",\"sent_ms\":" + start + ",\"async\":true";
        try {
            producer.send(msg, new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    emit(head + FIRST.getOrDefault(body, "")
                        + ",\"status\":" + quote(r.getSendStatus().name())
                        + ",\"broker\":" + quote(r.getMessageQueue().getBrokerName())
                        + ",\"queue\":" + r.getMessageQueue().getQueueId()
                        + ",\"msg_id\":" + quote(r.getMsgId())
                        + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
                    pending.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    emit(head + FIRST.getOrDefault(body, "") + ",\"error\":"
                        + quote(e.getClass().getSimpleName() + ": " + e.getMessage())
                        + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
                    pending.countDown();
                }
            });
        } catch (Exception e) {
            emit(head + ",\"error\":" + quote(error(e)) + ",\"cost_ms\":"
                + (System.currentTimeMillis() - start) + "}");
            pending.countDown();
        }
    }

    // one send, and its row on stdout (println writes the whole row at once)
    static void sendOne(DefaultMQProducer producer, SelectMessageQueueByHash selector, String topic,
                        String instance, String mode, int keys, int batch, int i, int thread) {
        long start = System.currentTimeMillis();
        String body = mode.equals("oneway") || namedBodies ? instance + "/m" + i : "m" + i;
        Message msg = new Message(topic, "rocketlb", body.getBytes(StandardCharsets.UTF_8));
        String key = mode.equals("hash") ? "k" + (i % keys) : null;
        String head = "{\"seq\":" + i + ",\"sent_ms\":" + start
            + (thread >= 0 ? ",\"thread\":" + thread : "")
            + (key != null ? ",\"key\":" + quote(key) : "")
            + (mode.equals("oneway") ? ",\"oneway\":true" : "")
            + (mode.equals("batch") ? ",\"batch\":" + batch : "");
        try {
            String row;
            if (mode.equals("oneway")) {
                producer.sendOneway(msg);
                row = head;
            } else {
                SendResult r;
                if (mode.equals("batch")) {
                    java.util.List<Message> msgs = new java.util.ArrayList<>();
                    for (int k = 0; k < batch; k++) {
                        msgs.add(new Message(topic, "rocketlb",
                            ("m" + i + "." + k).getBytes(StandardCharsets.UTF_8)));
                    }
                    r = producer.send(msgs);
                } else {
                    r = key != null ? producer.send(msg, selector, key) : producer.send(msg);
                }
                row = head + ",\"status\":" + quote(r.getSendStatus().name())
                    + ",\"broker\":" + quote(r.getMessageQueue().getBrokerName())
                    + ",\"queue\":" + r.getMessageQueue().getQueueId()
                    + ",\"msg_id\":" + quote(r.getMsgId());
            }
            emit(row + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
        } catch (Exception e) {
            emit(head + ",\"error\":" + quote(error(e)) + "}");
        }
    }

    static boolean namedBodies;       // NAMED: every body INSTANCE + "/m" + seq, as oneway's

    public static void main(String[] args) throws Exception {
        String namesrv = args[0], topic = args[1], group = args[2];
        int count = Integer.parseInt(args[3]);
        long interval = Long.parseLong(args[4]);
        boolean fault = args[5].equals("on");
        boolean trace = args[7].equals("on");
        String mode = arg(args, 9, "sync");
        int keys = arg(args, 10, 0);
        int threads = arg(args, 11, 1);
        int batch = arg(args, 12, 0);
        boolean retryNotStored = arg(args, 13, "off").equals("on");
        namedBodies = arg(args, 14, "off").equals("on");
        int backPressure = arg(args, 15, 0);
        if (backPressure != 0 && (!mode.equals("async") || backPressure < 10)) {
            throw new IllegalArgumentException("BACK_PRESSURE: 0, or 10 and more for async, got "
                + backPressure);
        }
        if (mode.equals("batch") != (batch >= 1) || batch > 256) {
            throw new IllegalArgumentException("BATCH: 1 to 256 for batch alone, got " + batch);
        }
        if (threads < 1 || threads > 16) {
            throw new IllegalArgumentException("THREADS: 1 to 16, got " + threads);
        }
        if (!java.util.List.of("sync", "hash", "oneway", "batch", "async").contains(mode)) {
            throw new IllegalArgumentException("MODE: sync, hash, oneway, batch or async, got "
                + mode);
        }
        if (mode.equals("async") && threads != 1) {
            throw new IllegalArgumentException("THREADS: 1 for async (the executor's threads "
                + "send), got " + threads);
        }
        if (mode.equals("hash") && keys < 1) {
            throw new IllegalArgumentException("KEYS: at least 1 for hash, got " + keys);
        }
        SelectMessageQueueByHash selector = new SelectMessageQueueByHash();
        DefaultMQProducer producer = new DefaultMQProducer(group, trace, null);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName(args[6]);
        producer.setSendLatencyFaultEnable(fault);
        producer.setRetryAnotherBrokerWhenNotStoreOK(retryNotStored);
        if (backPressure > 0) {
            // 5.x only (4.x has no such switch): by reflection, so that the driver compiles
            // against every line's client
            producer.getClass().getMethod("setEnableBackpressureForAsyncMode", boolean.class)
                .invoke(producer, true);
            producer.getClass().getMethod("setBackPressureForAsyncSendNum", int.class)
                .invoke(producer, backPressure);
        }
        if (mode.equals("async")) {
            hookFirstHops(producer);
            pending = new java.util.concurrent.CountDownLatch(count);
        }
        producer.start();
        emit("{\"started\":" + quote(producer.buildMQClientId()) + "}");
        awaitFile(java.nio.file.Path.of(args[8]), 10);
        try {
            if (mode.equals("async")) {
                for (int i = 0; i < count; i++) {
                    sendAsync(producer, topic, i);
                    if (interval > 0) { Thread.sleep(interval); }
                }
                pending.await(60, java.util.concurrent.TimeUnit.SECONDS);
            } else if (threads == 1) {
                for (int i = 0; i < count; i++) {
                    sendOne(producer, selector, topic, args[6], mode, keys, batch, i, -1);
                    if (interval > 0) { Thread.sleep(interval); }
                }
            } else {
                Thread[] senders = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    final int me = t;
                    senders[t] = new Thread(() -> {
                        try {
                            for (int i = me; i < count; i += threads) {
                                sendOne(producer, selector, topic, args[6], mode, keys, batch, i, me);
                                if (interval > 0) { Thread.sleep(interval); }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }, "send-" + t);
                    senders[t].start();
                }
                for (Thread sender : senders) { sender.join(); }
            }
        } finally {
            if (trace) { Thread.sleep(1500); }   // the trace dispatcher sends in batches
            producer.shutdown();
        }
        System.out.println("{\"done\":" + count + "}");
    }
}
