// rocketlb live driver: upstream's own DefaultLitePullConsumer of one RocketMQ line (run with
// its client jars on the class path, single-file source launch, Java 11+; DRIVER: Driver.java
// compiled, what every driver shares):
//
//   java -cp DRIVER:CLIENT_JARS LitePull.java NAMESRV TOPIC GROUP INSTANCE STOP_FILE
//        [TRACE(on|off) [ASSIGN]]
//
// With no ASSIGN it subscribes TOPIC ("*") in GROUP: its own rebalance (RebalanceLitePullImpl,
// AVG, the default) gives it its queues, and it logs "rebalanced result changed" as a push
// consumer does. With ASSIGN ("broker-a/0,broker-b/1": queues of TOPIC) it assigns itself
// those queues (assign(): no rebalance, the queues are its own), and still belongs to GROUP:
// its heartbeat names the group, with no subscription. Either way it polls (poll(1000)) until
// STOP_FILE exists, commits automatically (the default), then shuts down cleanly and exits.
// It writes "consumed.json" (the highest offset read per queue) and "ranges.json" (per queue
// the first and last offset read and how many distinct ones) in its user.home when it stops,
// as Consume.java does.
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

public class LitePull extends Driver {
    public static void main(String[] args) throws Exception {
        boolean trace = arg(args, 5, "off").equals("on");
        String assign = arg(args, 6, "");
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(args[2]);
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName(args[3]);
        consumer.setEnableMsgTrace(trace);
        List<MessageQueue> mine = new ArrayList<>();
        if (assign.isEmpty()) {
            consumer.subscribe(args[1], "*");
        } else {
            for (String q : assign.split(",")) {
                int slash = q.lastIndexOf('/');
                mine.add(new MessageQueue(args[1], q.substring(0, slash),
                                          Integer.parseInt(q.substring(slash + 1))));
            }
        }
        Path home = Path.of(System.getProperty("user.home"));
        Path stop = Path.of(args[4]);
        String error = null;
        try {
            consumer.start();
            if (!mine.isEmpty()) {
                consumer.assign(mine);
            }
        } catch (Exception e) {
            error = e.toString();
        }
        emit("{\"started\":" + quote(args[3]) + (error == null ? "" : ",\"start_error\":"
            + quote(error)) + "}");
        Map<String, Set<Long>> seen = new TreeMap<>();
        while (!Files.exists(stop)) {
            if (error != null) {
                Thread.sleep(100);
                continue;
            }
            for (MessageExt m : consumer.poll(1000)) {
                seen.computeIfAbsent(m.getBrokerName() + "/" + m.getQueueId(),
                                     k -> new TreeSet<>()).add(m.getQueueOffset());
            }
        }
        StringBuilder highest = new StringBuilder("{");
        StringBuilder ranges = new StringBuilder("{");
        for (Map.Entry<String, Set<Long>> e : seen.entrySet()) {
            Set<Long> offsets = e.getValue();
            highest.append(highest.length() > 1 ? "," : "").append(quote(e.getKey())).append(':')
                .append(Collections.max(offsets));
            ranges.append(ranges.length() > 1 ? "," : "").append(quote(e.getKey())).append(":[")
                .append(Collections.min(offsets)).append(',').append(Collections.max(offsets))
                .append(',').append(offsets.size()).append(']');
        }
        Files.writeString(home.resolve("consumed.json"), highest.append("}\n").toString());
        Files.writeString(home.resolve("ranges.json"), ranges.append("}\n").toString());
        consumer.shutdown();
        emit("{\"stopped\":true}");
        System.exit(0);
    }
}
