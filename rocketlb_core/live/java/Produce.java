// rocketlb live driver: upstream's own DefaultMQProducer, run with the client jars of one
// RocketMQ line on the class path (single-file source launch, Java 11+):
//
//   java -cp CLIENT_JARS Produce.java NAMESRV TOPIC GROUP COUNT INTERVAL_MS FAULT(on|off) INSTANCE
//        TRACE(on|off) GO_FILE [MODE(sync|hash|oneway) [KEYS]]
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
// where each one was stored).
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.selector.SelectMessageQueueByHash;
import org.apache.rocketmq.common.message.Message;
import java.nio.charset.StandardCharsets;

public class Produce {
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') { b.append('\\').append(c); }
            else if (c < 0x20) { b.append(String.format("\\u%04x", (int) c)); }
            else { b.append(c); }
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0], topic = args[1], group = args[2];
        int count = Integer.parseInt(args[3]);
        long interval = Long.parseLong(args[4]);
        boolean fault = args[5].equals("on");
        boolean trace = args[7].equals("on");
        String mode = args.length > 9 ? args[9] : "sync";
        int keys = args.length > 10 ? Integer.parseInt(args[10]) : 0;
        if (!mode.equals("sync") && !mode.equals("hash") && !mode.equals("oneway")) {
            throw new IllegalArgumentException("MODE: sync, hash or oneway, got " + mode);
        }
        if (mode.equals("hash") && keys < 1) {
            throw new IllegalArgumentException("KEYS: at least 1 for hash, got " + keys);
        }
        SelectMessageQueueByHash selector = new SelectMessageQueueByHash();
        DefaultMQProducer producer = new DefaultMQProducer(group, trace, null);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName(args[6]);
        producer.setSendLatencyFaultEnable(fault);
        producer.start();
        System.out.println("{\"started\":" + quote(producer.buildMQClientId()) + "}");
        System.out.flush();
        java.nio.file.Path go = java.nio.file.Path.of(args[8]);
        while (!java.nio.file.Files.exists(go)) {
            Thread.sleep(10);
        }
        try {
            for (int i = 0; i < count; i++) {
                long start = System.currentTimeMillis();
                String body = mode.equals("oneway") ? args[6] + "/m" + i : "m" + i;
                Message msg = new Message(topic, "rocketlb", body.getBytes(StandardCharsets.UTF_8));
                String key = mode.equals("hash") ? "k" + (i % keys) : null;
                String head = "{\"seq\":" + i + ",\"sent_ms\":" + start
                    + (key != null ? ",\"key\":" + quote(key) : "")
                    + (mode.equals("oneway") ? ",\"oneway\":true" : "");
                try {
                    String row;
                    if (mode.equals("oneway")) {
                        producer.sendOneway(msg);
                        row = head;
                    } else {
                        SendResult r = key != null ? producer.send(msg, selector, key) : producer.send(msg);
                        row = head + ",\"status\":" + quote(r.getSendStatus().name())
                            + ",\"broker\":" + quote(r.getMessageQueue().getBrokerName())
                            + ",\"queue\":" + r.getMessageQueue().getQueueId()
                            + ",\"msg_id\":" + quote(r.getMsgId());
                    }
                    System.out.println(row + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
                } catch (Exception e) {
                    System.out.println(head
                        + ",\"error\":" + quote(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}");
                }
                System.out.flush();
                if (interval > 0) { Thread.sleep(interval); }
            }
        } finally {
            if (trace) { Thread.sleep(1500); }   // the trace dispatcher sends in batches
            producer.shutdown();
        }
        System.out.println("{\"done\":" + count + "}");
    }
}
