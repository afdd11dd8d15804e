// rocketlb live driver: a gRPC consumer of apache/rocketmq-clients (rocketmq-client-java, one
// shaded jar on the class path; compiled with Driver.java, what every driver shares, and the
// jar's log binding, StaticLoggerBinder.java, into CLASSES), through a Proxy:
//
//   java -cp CLASSES:CLIENT_JAVA_JAR GrpcConsume ENDPOINTS TOPIC GROUP KIND STOP_FILE
//
// KIND "simple": a SimpleConsumer (awaitDuration AWAIT_S) that calls receive(MAX_MESSAGES,
// INVISIBLE_S) in a loop and acknowledges every message it got, printing one JSON object per
// receive *call*:
//   {"call":0,"start_ms":...,"end_ms":...,"messages":[MESSAGE, ...]}   (maybe [] : empty)
//   {"call":1,"start_ms":...,"end_ms":...,"error":"..."}
// KIND "push": a PushConsumer whose listener prints one MESSAGE per consumed message (with its
// "ms") and returns SUCCESS. Both run until STOP_FILE exists, then close() (a clean shutdown:
// the client tells the Proxy it terminates) and print {"stopped":true}. Killing the process is
// a crash. The first line is {"started":CLIENT_ID}.
//
// MESSAGE: {"client_broker":"broker-a","client_queue":3,"broker":"broker-a","queue":1,
//           "offset":12,"retry":false,"seq":42,"key":"seq-42","attempt":1,"msg_id":"01..."}
// What the message view tells: MessageView (the API) has no queue; its implementation
// MessageViewImpl (a public class of the jar) has getMessageQueue(), which is the queue the
// CLIENT asked (ConsumerImpl.receiveMessage hands its request's MessageQueueImpl to
// MessageViewImpl.fromProtobuf: the simple consumer's SubscriptionLoadBalancer pick, or the push
// consumer's assigned queue, id -1), hence "client_broker"/"client_queue", and getOffset(), the
// queue offset the Proxy sent (SystemProperties.queue_offset). Where the message really was is
// in its receipt handle, which the Proxy takes from the popped message's POP_CK property
// (ReceiveMessageResponseStreamWriter): rocketmq-common 5.3.3 ReceiptHandle.decode reads it as
// "startOffset retrieveTime invisibleTime reviveQueueId topicType brokerName queueId offset
// [commitLogOffset]" separated by spaces; topicType "0" is the topic itself, others a retry
// topic (a message redelivered after its invisible time: queue and offset are then the retry
// topic's), hence "broker", "queue", "offset" (from the handle) and "retry". "attempt" is the
// delivery attempt (1 the first time).
//
// The Proxy (rocketmq-proxy 5.3.3, ReceiveMessageActivity) raises a long-polling time below
// grpcClientConsumerMinLongPollingTimeoutMillis (5 s) to 5 s and then refuses a receive whose
// deadline (the client's awaitDuration plus its request timeout) leaves less than that: hence
// AWAIT_S 5 (a shorter awaitDuration makes every empty receive an ILLEGAL_POLLING_TIME error).
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.java.impl.ClientImpl;
import org.apache.rocketmq.client.java.message.MessageViewImpl;
import org.apache.rocketmq.client.java.route.MessageQueueImpl;
import org.apache.rocketmq.shaded.org.slf4j.impl.StaticLoggerBinder;
import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;

public class GrpcConsume extends Driver {
    static final int MAX_MESSAGES = 16;
    static final Duration INVISIBLE = Duration.ofSeconds(15);
    static final Duration AWAIT = Duration.ofSeconds(5);

    static String message(MessageView view) {
        StringBuilder row = new StringBuilder("{");
        if (view instanceof MessageViewImpl) {
            MessageViewImpl impl = (MessageViewImpl) view;
            MessageQueueImpl mq = impl.getMessageQueue();
            row.append("\"client_broker\":").append(quote(mq.getBroker().getName()))
                .append(",\"client_queue\":").append(mq.getQueueId()).append(',');
            String[] handle = impl.getReceiptHandle().split(" ");
            if (handle.length >= 8) {
                row.append("\"broker\":").append(quote(handle[5]))
                    .append(",\"queue\":").append(Integer.parseInt(handle[6]))
                    .append(",\"offset\":").append(Long.parseLong(handle[7]))
                    .append(",\"retry\":").append(!"0".equals(handle[4])).append(',');
            } else {
                row.append("\"handle\":").append(quote(impl.getReceiptHandle())).append(',');
            }
            row.append("\"view_offset\":").append(impl.getOffset()).append(',');
        }
        String body = StandardCharsets.UTF_8.decode(view.getBody()).toString();
        String seq = body.startsWith("m") ? body.substring(1) : "";
        row.append("\"seq\":").append(seq.matches("\\d+") ? seq : quote(body))
            .append(",\"key\":").append(quote(String.join(",", view.getKeys())))
            .append(",\"attempt\":").append(view.getDeliveryAttempt())
            .append(",\"msg_id\":").append(quote(view.getMessageId().toString()));
        return row.toString();
    }

    static String clientId(Object client) {
        return client instanceof ClientImpl ? ((ClientImpl) client).getClientId().toString() : "";
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0], topic = args[1], group = args[2], kind = args[3];
        Path stop = Path.of(args[4]);
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration conf = ClientConfiguration.newBuilder().setEndpoints(endpoints)
            .enableSsl(false).setRequestTimeout(Duration.ofSeconds(3)).build();
        FilterExpression all = new FilterExpression("*", FilterExpressionType.TAG);
        // a start that failed (a JVM still loading its classes spends the deadline) is tried
        // again (Driver.java)
        Closeable client = startRetried(() -> {
            if (kind.equals("simple")) {
                return provider.newSimpleConsumerBuilder().setClientConfiguration(conf)
                    .setConsumerGroup(group).setAwaitDuration(AWAIT)
                    .setSubscriptionExpressions(Collections.singletonMap(topic, all)).build();
            } else if (kind.equals("push")) {
                return provider.newPushConsumerBuilder().setClientConfiguration(conf)
                    .setConsumerGroup(group)
                    .setSubscriptionExpressions(Collections.singletonMap(topic, all))
                    .setMessageListener(view -> {
                        emit(message(view) + ",\"ms\":" + System.currentTimeMillis() + "}");
                        return ConsumeResult.SUCCESS;
                    }).build();
            }
            throw new IllegalArgumentException("KIND is simple or push, not " + kind);
        });
        emit("{\"started\":" + quote(clientId(client)) + "}");
        try {
            if (client instanceof SimpleConsumer) {
                SimpleConsumer consumer = (SimpleConsumer) client;
                for (long call = 0; !Files.exists(stop); call++) {
                    long start = System.currentTimeMillis();
                    List<MessageView> got;
                    try {
                        got = consumer.receive(MAX_MESSAGES, INVISIBLE);
                    } catch (Exception e) {
                        emit("{\"call\":" + call + ",\"start_ms\":" + start + ",\"end_ms\":"
                            + System.currentTimeMillis() + ",\"error\":" + quote(error(e)) + "}");
                        continue;
                    }
                    long end = System.currentTimeMillis();
                    StringBuilder row = new StringBuilder("{\"call\":" + call + ",\"start_ms\":"
                        + start + ",\"end_ms\":" + end + ",\"messages\":[");
                    for (int i = 0; i < got.size(); i++) {
                        MessageView view = got.get(i);
                        row.append(i == 0 ? "" : ",").append(message(view));
                        try {
                            consumer.ack(view);
                        } catch (Exception e) {
                            row.append(",\"ack_error\":").append(quote(error(e)));
                        }
                        row.append('}');
                    }
                    emit(row.append("]}").toString());
                }
            } else {
                awaitFile(stop, 50);
            }
        } finally {
            client.close();
            emit("{\"stopped\":true}");
            StaticLoggerBinder.stop();
        }
    }
}
