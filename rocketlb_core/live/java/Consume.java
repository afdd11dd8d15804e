// rocketlb live driver: upstream's own DefaultMQPushConsumer of one RocketMQ line (run with its
// client jars on the class path, single-file source launch, Java 11+; DRIVER: Driver.java
// compiled, what every driver shares):
//
//   java -cp DRIVER:CLIENT_JARS Consume.java NAMESRV TOPIC GROUP INSTANCE STOP_FILE [TRACE(on|off)
//        [STRATEGY [SUBSCRIPTION [MODEL [LISTENER [REBALANCE]]]]]]
//
// Subscribes TOPIC with SUBSCRIPTION (a tag expression, default "*": every message) in GROUP,
// with MODEL CLUSTERING (the default) or BROADCASTING (setMessageModel) and a LISTENER
// "concurrently" (MessageListenerConcurrently, the default) or "orderly"
// (MessageListenerOrderly, returning SUCCESS), and allocates with STRATEGY (default AVG, upstream's default): AVG
// (AllocateMessageQueueAveragely), AVG_BY_CIRCLE (AllocateMessageQueueAveragelyByCircle) or
// CONSISTENT_HASH (AllocateMessageQueueConsistentHash): the names their getName() returns, which
// the client logs as allocateMessageQueueStrategyName= (the same classes in 4.9.x and 5.x).
// Consumes and acknowledges everything, and keeps running until STOP_FILE exists; then it shuts
// down cleanly (offsets persisted, unregistered from every broker) and exits. Killing it instead
// is a crash. Its assignments are what the client itself logs ("rebalanced result changed ...")
// in rocketmq_client.log under its user.home (logs/rocketmqlogs), its subscription what its
// heartbeats log (HeartbeatData [... subString=...]). With TRACE on, its message trace writes
// SubBefore and SubAfter records to RMQ_SYS_TRACE_TOPIC.
//
// A hung listener (issue 45): once the file "hang" exists in its user.home, the next message the
// listener is handed is not returned from until STOP_FILE exists (one consume thread of 20
// stays in the call, as an application's stuck call would); its queue, offset and time go to
// "hung.json" there. It writes "consumed.json" (the highest offset consumed per queue) when it
// stops, and keeps the same counts in memory meanwhile, and "ranges.json": per queue the first
// and last offset consumed and how many distinct offsets (what a broadcasting member read).
//
// An orderly listener (issue 45), and a concurrently consuming one given "consumes" as its
// twelfth argument, also appends a row to "consumes.jsonl" for each message it is handed,
// flushed before the call returns (so a crash loses none it returned):
// {"q":"broker-a/0","o":OFFSET,"t":WALL_MS}, in the order the calls ran. An orderly member
// holds a queue only while the broker's lock is its own: who consumed which offset when is
// what the check compares with the locks the brokers logged.
//
// REBALANCE "broker" (5.x clients; issue 45, pop): setClientRebalance(false), so the consumer
// asks a broker for its queues (QUERY_ASSIGNMENT) and pops those the broker gives in POP mode;
// its log then says "broker rebalanced result changed ... assignmentSet=[...]". Such a consumer
// also writes "offsets.json": per queue every distinct offset it consumed (pops of one queue
// by several members interleave, so a range says too little), "deliveries" per queue, and
// "redelivered": the body of each message the broker delivered again from a retry topic
// (reconsume times above 0: delivered before, not necessarily consumed), whose queue and
// offset are that topic's. An orderly or broadcasting consumer allocates on the client
// whatever REBALANCE says (RebalancePushImpl.clientRebalance): the scenario refuses those.
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.message.MessageExt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

public class Consume extends Driver {
    public static void main(String[] args) throws Exception {
        boolean trace = arg(args, 5, "off").equals("on");
        String strategy = arg(args, 6, "AVG");
        String subscription = arg(args, 7, "*");
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2], trace, null);
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName(args[3]);
        consumer.setAllocateMessageQueueStrategy(strategy(strategy));
        consumer.subscribe(args[1], subscription);
        Path home = Path.of(System.getProperty("user.home"));
        Path stop = Path.of(args[4]);
        AtomicBoolean hung = new AtomicBoolean(false);
        Map<String, Long> consumed = new ConcurrentHashMap<>();
        String model = arg(args, 8, "CLUSTERING");
        String listener = arg(args, 9, "concurrently");
        messageModel(consumer, model);
        boolean byBroker = arg(args, 10, "client").equals("broker");
        if (byBroker) {
            // 5.x only (DefaultMQPushConsumer.setClientRebalance): by name, so that this file
            // still compiles against a 4.9.x client
            DefaultMQPushConsumer.class.getMethod("setClientRebalance", boolean.class)
                .invoke(consumer, false);
        }
        Map<String, Long> deliveries = new ConcurrentHashMap<>();
        List<String> redelivered = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Map<String, Set<Long>> seen = new ConcurrentHashMap<>();
        // arg 11 "consumes": a concurrently consuming member writes its rows too (a recording
        // with slaves: which member read what, when, while a master was down)
        java.io.Writer rows = listener.equals("orderly") || arg(args, 11, "").equals("consumes")
            ? Files.newBufferedWriter(home.resolve("consumes.jsonl")) : null;
        // one body for both listeners: note each message, hang once when asked
        java.util.function.Consumer<List<MessageExt>> take = msgs -> {
            for (MessageExt m : msgs) {
                if (byBroker && m.getReconsumeTimes() > 0) {
                    // a redelivery (from a retry topic): its queue and offset are the retry
                    // topic's, so it is noted by its body
                    redelivered.add(new String(m.getBody(), java.nio.charset.StandardCharsets.UTF_8));
                    continue;
                }
                String q = m.getBrokerName() + "/" + m.getQueueId();
                consumed.merge(q, m.getQueueOffset(), Math::max);
                deliveries.merge(q, 1L, Long::sum);
                seen.computeIfAbsent(q, k -> ConcurrentHashMap.newKeySet()).add(m.getQueueOffset());
                if (rows != null) {
                    synchronized (rows) {
                        try {
                            rows.write("{\"q\":" + quote(q) + ",\"o\":" + m.getQueueOffset()
                                + ",\"t\":" + System.currentTimeMillis() + "}\n");
                            rows.flush();
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                }
            }
            if (Files.exists(home.resolve("hang")) && hung.compareAndSet(false, true)) {
                MessageExt m = msgs.get(0);
                try {
                    Files.writeString(home.resolve("hung.json"), "{\"broker\":"
                        + quote(m.getBrokerName()) + ",\"queue\":" + m.getQueueId()
                        + ",\"offset\":" + m.getQueueOffset() + ",\"wall_ms\":"
                        + System.currentTimeMillis() + "}\n");
                    awaitFile(stop, 100);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        switch (listener) {
            case "concurrently":
                consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    take.accept(msgs);
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                break;
            case "orderly":
                consumer.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                    take.accept(msgs);
                    return ConsumeOrderlyStatus.SUCCESS;
                });
                break;
            default: throw new IllegalArgumentException("unknown listener " + listener
                + " (concurrently or orderly)");
        }
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
        emit("{\"started\":" + quote(consumer.buildMQClientId())
            + (error == null ? "" : ",\"start_error\":" + quote(error)) + "}");
        awaitFile(stop, 100);
        // clean when start() had set RUNNING before it threw (4.9.8 looks the route up after);
        // a start that failed earlier leaves shutdown() nothing to do and the instance running,
        // so the process ends here and its connections close with it
        StringBuilder highest = new StringBuilder("{");
        for (Map.Entry<String, Long> e : new TreeMap<>(consumed).entrySet()) {
            highest.append(highest.length() > 1 ? "," : "").append(quote(e.getKey())).append(':')
                .append(e.getValue());
        }
        Files.writeString(home.resolve("consumed.json"), highest.append("}\n").toString());
        StringBuilder ranges = new StringBuilder("{");
        for (Map.Entry<String, Set<Long>> e : new TreeMap<>(seen).entrySet()) {
            Set<Long> offsets = e.getValue();
            ranges.append(ranges.length() > 1 ? "," : "").append(quote(e.getKey())).append(":[")
                .append(java.util.Collections.min(offsets)).append(',')
                .append(java.util.Collections.max(offsets)).append(',')
                .append(offsets.size()).append(']');
        }
        Files.writeString(home.resolve("ranges.json"), ranges.append("}\n").toString());
        if (byBroker) {
            StringBuilder all = new StringBuilder("{\"offsets\":{");
            for (Map.Entry<String, Set<Long>> e : new TreeMap<>(seen).entrySet()) {
                all.append(all.length() > 12 ? "," : "").append(quote(e.getKey())).append(":")
                    .append(new java.util.TreeSet<>(e.getValue()).toString().replace(" ", ""));
            }
            all.append("},\"deliveries\":{");
            int at = all.length();
            for (Map.Entry<String, Long> e : new TreeMap<>(deliveries).entrySet()) {
                all.append(all.length() > at ? "," : "").append(quote(e.getKey())).append(':')
                    .append(e.getValue());
            }
            all.append("},\"redelivered\":[");
            synchronized (redelivered) {
                for (int i = 0; i < redelivered.size(); i++) {
                    all.append(i > 0 ? "," : "").append(quote(redelivered.get(i)));
                }
            }
            Files.writeString(home.resolve("offsets.json"), all.append("]}\n").toString());
        }
        consumer.shutdown();
        if (rows != null) {
            synchronized (rows) {
                rows.close();
            }
        }
        emit("{\"stopped\":true}");
        // 5.x never shuts consumeMessagePopService down (5.3.3 and 5.5.0): a consumer that
        // popped keeps its pop consume threads, and an orderly clustering one the pop orderly
        // service's lockMQPeriodically schedule (ConsumeMessagePopOrderlyService.start, a
        // thread that is not a daemon, even when nothing popped), so the JVM would not exit
        System.exit(0);
    }

    // MessageModel moved package in 5.1.0 (common.protocol to remoting.protocol): set it by name
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void messageModel(DefaultMQPushConsumer consumer, String name) throws Exception {
        for (java.lang.reflect.Method m : DefaultMQPushConsumer.class.getMethods()) {
            if (m.getName().equals("setMessageModel")) {
                Class type = m.getParameterTypes()[0];
                m.invoke(consumer, Enum.valueOf(type, name));
                return;
            }
        }
        throw new IllegalStateException("no setMessageModel");
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
}
