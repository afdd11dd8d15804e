// rocketlb live driver: upstream's own DefaultMQPushConsumer of one RocketMQ line (run with its
// client jars on the class path, single-file source launch, Java 11+):
//
//   java -cp CLIENT_JARS Consume.java NAMESRV TOPIC GROUP INSTANCE STOP_FILE [TRACE(on|off)]
//
// Subscribes TOPIC ("*") in GROUP (clustering, the default strategy AVG), consumes and
// acknowledges everything, and keeps running until STOP_FILE exists; then it shuts down cleanly
// (offsets persisted, unregistered from every broker) and exits. Killing it instead is a crash.
// Its assignments are what the client itself logs ("rebalanced result changed ...") in
// rocketmq_client.log under its user.home (logs/rocketmqlogs). With TRACE on, its message trace
// writes SubBefore and SubAfter records to RMQ_SYS_TRACE_TOPIC.
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import java.nio.file.Files;
import java.nio.file.Path;

public class Consume {
    public static void main(String[] args) throws Exception {
        boolean trace = args.length > 5 && args[5].equals("on");
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2], trace, null);
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName(args[3]);
        consumer.subscribe(args[1], "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();
        System.out.println("{\"started\":\"" + consumer.buildMQClientId() + "\"}");
        System.out.flush();
        Path stop = Path.of(args[4]);
        while (!Files.exists(stop)) {
            Thread.sleep(100);
        }
        consumer.shutdown();
        System.out.println("{\"stopped\":true}");
    }
}
