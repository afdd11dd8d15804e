// rocketlb live driver: read every message of a topic back, untouched, with upstream's own
// DefaultMQPullConsumer of one RocketMQ line (single-file source launch, Java 11+; DRIVER:
// Driver.java compiled, what every driver shares):
//
//   java -cp DRIVER:CLIENT_JARS DumpTopic.java NAMESRV TOPIC
//
// For each of the topic's queues, from its minimum to its maximum offset, prints one JSON object
// per message: {"broker":"broker-b","queue":0,"offset":12,"store_ms":...,"born_ms":...,
// "born_host":"127.0.0.1:54321","keys":"...","body":"..."}. The body is the message's bytes as
// UTF-8 text, every character kept (JSON escapes the separators (char) 1 and (char) 2 of the
// message trace). Used to record RMQ_SYS_TRACE_TOPIC (spec: real-data.md section 1).
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

public class DumpTopic extends Driver {
    @SuppressWarnings("deprecation")
    public static void main(String[] args) throws Exception {
        DefaultMQPullConsumer consumer = new DefaultMQPullConsumer("rocketlb_dump");
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName("rocketlb-dump");
        consumer.start();
        int total = 0;
        try {
            List<MessageQueue> queues = new ArrayList<>(consumer.fetchSubscribeMessageQueues(args[1]));
            queues.sort(Comparator.comparing(MessageQueue::getBrokerName).thenComparing(MessageQueue::getQueueId));
            for (MessageQueue mq : queues) {
                long offset = consumer.minOffset(mq);
                long max = consumer.maxOffset(mq);
                while (offset < max) {
                    PullResult r = consumer.pull(mq, "*", offset, 32);
                    if (r.getPullStatus() != PullStatus.FOUND) { break; }
                    for (MessageExt m : r.getMsgFoundList()) {
                        System.out.println("{\"broker\":" + quote(mq.getBrokerName())
                            + ",\"queue\":" + mq.getQueueId() + ",\"offset\":" + m.getQueueOffset()
                            + ",\"store_ms\":" + m.getStoreTimestamp() + ",\"born_ms\":" + m.getBornTimestamp()
                            + ",\"born_host\":" + quote(m.getBornHostString() + ":" + ((java.net.InetSocketAddress) m.getBornHost()).getPort())
                            + ",\"keys\":" + quote(m.getKeys())
                            + ",\"body\":" + quote(new String(m.getBody(), StandardCharsets.UTF_8)) + "}");
                        total++;
                    }
                    offset = r.getNextBeginOffset();
                }
            }
        } finally {
            consumer.shutdown();
        }
        System.out.println("{\"done\":" + total + "}");
    }
}
