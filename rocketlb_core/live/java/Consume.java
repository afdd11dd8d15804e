// rocketlb live driver: upstream's own DefaultMQPushConsumer of one RocketMQ line (run with its
// client jars on the class path, single-file source launch, Java 11+):
//
//   java -cp CLIENT_JARS Consume.java NAMESRV TOPIC GROUP INSTANCE STOP_FILE [TRACE(on|off)
//        [STRATEGY [SUBSCRIPTION]]]
//
// Subscribes TOPIC with SUBSCRIPTION (a tag expression, default "*": every message) in GROUP
// (clustering) and allocates with STRATEGY (default AVG, upstream's default): AVG
// (AllocateMessageQueueAveragely), AVG_BY_CIRCLE (AllocateMessageQueueAveragelyByCircle) or
// CONSISTENT_HASH (AllocateMessageQueueConsistentHash): the names their getName() returns, which
// the client logs as allocateMessageQueueStrategyName= (the same classes in 4.9.x and 5.x).
// Consumes and acknowledges everything, and keeps running until STOP_FILE exists; then it shuts
// down cleanly (offsets persisted, unregistered from every broker) and exits. Killing it instead
// is a crash. Its assignments are what the client itself logs ("rebalanced result changed ...")
// in rocketmq_client.log under its user.home (logs/rocketmqlogs), its subscription what its
// heartbeats log (HeartbeatData [... subString=...]). With TRACE on, its message trace writes
// SubBefore and SubAfter records to RMQ_SYS_TRACE_TOPIC.
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import java.nio.file.Files;
import java.nio.file.Path;

public class Consume {
    public static void main(String[] args) throws Exception {
        boolean trace = args.length > 5 && args[5].equals("on");
        String strategy = args.length > 6 ? args[6] : "AVG";
        String subscription = args.length > 7 ? args[7] : "*";
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2], trace, null);
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName(args[3]);
        consumer.setAllocateMessageQueueStrategy(strategy(strategy));
        consumer.subscribe(args[1], subscription);
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        // start() throws when its first route lookup times out (updateTopicRouteInfo...
        // wraps the RemotingException in an IllegalStateException, seen live on a loaded host).
        // 4.9.x: the client instance it started keeps heartbeating and rebalancing, so the group
        // has a member; 5.x: DefaultMQPushConsumerImpl.start catches it, calls shutdown() and
        // rethrows, so the group has none. Say so and go on, as an application that logs the
        // failure would.
        String error = null;
        try {
            consumer.start();
        } catch (RuntimeException e) {
            error = e.toString();
        }
        System.out.println("{\"started\":" + quote(consumer.buildMQClientId())
            + (error == null ? "" : ",\"start_error\":" + quote(error)) + "}");
        System.out.flush();
        Path stop = Path.of(args[4]);
        while (!Files.exists(stop)) {
            Thread.sleep(100);
        }
        // clean when start() had set RUNNING before it threw (4.9.8 looks the route up after);
        // a start that failed earlier leaves shutdown() nothing to do and the instance running,
        // so the process ends here and its connections close with it
        consumer.shutdown();
        System.out.println("{\"stopped\":true}");
        System.out.flush();
        if (error != null) {
            System.exit(0);
        }
    }

    static AllocateMessageQueueStrategy strategy(String name) {
        switch (name) {
            case "AVG": return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE": return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH": return new AllocateMessageQueueConsistentHash();
            default: throw new IllegalArgumentException("unknown strategy " + name
                + " (AVG, AVG_BY_CIRCLE or CONSISTENT_HASH)");
        }
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') { b.append('\\').append(c); }
            else if (c < 0x20) { b.append(String.format("\\u%04x", (int) c)); }
            else { b.append(c); }
        }
        return b.append('"').toString();
    }
}
