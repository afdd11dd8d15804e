// rocketlb live driver: upstream's own DefaultMQProducer, run with the client jars of one
// RocketMQ line on the class path (single-file source launch, Java 11+):
//
//   java -cp CLIENT_JARS Produce.java NAMESRV TOPIC GROUP COUNT INTERVAL_MS FAULT(on|off) INSTANCE
//
// Sends COUNT messages synchronously, one every INTERVAL_MS, and prints one JSON object per
// send on stdout: {"seq":0,"sent_ms":...,"status":"SEND_OK","broker":"broker-a","queue":3,
// "cost_ms":2} or {"seq":1,"sent_ms":...,"error":"..."}; then {"done":COUNT}. This is the
// ground truth of issue 14: where the real client put every message.
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
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
        DefaultMQProducer producer = new DefaultMQProducer(group);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName(args[6]);
        producer.setSendLatencyFaultEnable(fault);
        producer.start();
        try {
            for (int i = 0; i < count; i++) {
                long start = System.currentTimeMillis();
                Message msg = new Message(topic, "rocketlb", ("m" + i).getBytes(StandardCharsets.UTF_8));
                try {
                    SendResult r = producer.send(msg);
                    System.out.println("{\"seq\":" + i + ",\"sent_ms\":" + start
                        + ",\"status\":" + quote(r.getSendStatus().name())
                        + ",\"broker\":" + quote(r.getMessageQueue().getBrokerName())
                        + ",\"queue\":" + r.getMessageQueue().getQueueId()
                        + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
                } catch (Exception e) {
                    System.out.println("{\"seq\":" + i + ",\"sent_ms\":" + start
                        + ",\"error\":" + quote(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}");
                }
                System.out.flush();
                if (interval > 0) { Thread.sleep(interval); }
            }
        } finally {
            producer.shutdown();
        }
        System.out.println("{\"done\":" + count + "}");
    }
}
