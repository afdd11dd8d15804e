// rocketlb live driver: the gRPC producer of apache/rocketmq-clients (rocketmq-client-java, one
// shaded jar on the class path; single-file source launch, Java 11+), sending through a Proxy
// (CLASSES: Driver.java, what every driver shares, and the jar's log binding,
// StaticLoggerBinder.java, compiled):
//
//   java -cp CLASSES:CLIENT_JAVA_JAR GrpcProduce.java ENDPOINTS TOPIC COUNT INTERVAL_MS MAX_ATTEMPTS GO_FILE
//
// Starts (its route fetched from the Proxy), prints {"started":CLIENT_ID}, waits until GO_FILE
// exists, then sends COUNT messages synchronously (body "m<seq>", key "seq-<seq>"), one every
// INTERVAL_MS, and prints one JSON object per send on stdout:
//   {"seq":0,"sent_ms":...,"status":"SEND_OK","client_broker":"broker-a","client_queue":3,
//    "msg_id":"01...","offset":12,"cost_ms":2}
// or {"seq":1,"sent_ms":...,"error":"...","cost_ms":9004}; then {"done":COUNT}.
//
// What the receipt tells: SendReceipt (the API) has only the message id; its implementation
// SendReceiptImpl (a public class of the jar) also has the queue and the offset. The queue is
// the one the CLIENT chose for the attempt that succeeded (ProducerImpl hands its candidate
// MessageQueueImpl to processResponseInvocation), not necessarily where the message went: the
// Proxy's SendMessageActivity picks its own queue (SendMessageQueueSelector). The offset is the
// stored message's queue offset as the broker answered it. Hence "client_broker"/"client_queue".
// The message id is made by the client once per message and kept by every attempt (the Proxy
// sets it as the stored message's UNIQ_KEY).
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.java.impl.ClientImpl;
import org.apache.rocketmq.client.java.impl.producer.SendReceiptImpl;
import org.apache.rocketmq.client.java.route.MessageQueueImpl;
import org.apache.rocketmq.shaded.org.slf4j.impl.StaticLoggerBinder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

public class GrpcProduce extends Driver {
    public static void main(String[] args) throws Exception {
        String endpoints = args[0], topic = args[1];
        int count = Integer.parseInt(args[2]);
        long interval = Long.parseLong(args[3]);
        int maxAttempts = Integer.parseInt(args[4]);
        java.nio.file.Path go = java.nio.file.Path.of(args[5]);
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration conf = ClientConfiguration.newBuilder().setEndpoints(endpoints)
            .enableSsl(false).setRequestTimeout(Duration.ofSeconds(3)).build();
        // build() starts the client and fetches the topic's route (tried again: see Driver.java)
        Producer producer = startRetried(() -> provider.newProducerBuilder()
            .setClientConfiguration(conf).setTopics(topic).setMaxAttempts(maxAttempts).build());
        String clientId = producer instanceof ClientImpl
            ? ((ClientImpl) producer).getClientId().toString() : "";
        emit("{\"started\":" + quote(clientId) + "}");
        awaitFile(go, 10);
        try {
            for (int i = 0; i < count; i++) {
                long start = System.currentTimeMillis();
                Message msg = provider.newMessageBuilder().setTopic(topic).setTag("rocketlb")
                    .setKeys("seq-" + i).setBody(("m" + i).getBytes(StandardCharsets.UTF_8)).build();
                try {
                    SendReceipt r = producer.send(msg);
                    StringBuilder row = new StringBuilder("{\"seq\":" + i + ",\"sent_ms\":" + start
                        + ",\"status\":\"SEND_OK\"");
                    if (r instanceof SendReceiptImpl) {
                        SendReceiptImpl ri = (SendReceiptImpl) r;
                        MessageQueueImpl mq = ri.getMessageQueue();
                        row.append(",\"client_broker\":").append(quote(mq.getBroker().getName()))
                            .append(",\"client_queue\":").append(mq.getQueueId())
                            .append(",\"offset\":").append(ri.getOffset());
                    }
                    row.append(",\"msg_id\":").append(quote(r.getMessageId().toString()))
                        .append(",\"cost_ms\":").append(System.currentTimeMillis() - start).append("}");
                    emit(row.toString());
                } catch (Exception e) {
                    emit("{\"seq\":" + i + ",\"sent_ms\":" + start
                        + ",\"error\":" + quote(error(e))
                        + ",\"cost_ms\":" + (System.currentTimeMillis() - start) + "}");
                }
                if (interval > 0) { Thread.sleep(interval); }
            }
        } finally {
            producer.close();
            StaticLoggerBinder.stop();
        }
        System.out.println("{\"done\":" + count + "}");
    }
}
