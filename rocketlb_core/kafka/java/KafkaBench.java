// rocketlb: kafka-clients' own sticky assignors timed on bench/allocation.py's large cases, so
// the bench prints Kafka's Java time beside the port's in one run (issue 48). Built and run by
// bench/allocation.py against the jars rocketlb_core.kafka.vectors fetches.
//   java KafkaBench large|unequal sticky|cooperative-sticky REPS
// large: one topic "T" of 1,000,000 partitions, 2,000 members consumer-NNNNN-HHHHHHHH, the first
//   1,992 owning the round-robin split at generation 1 (the port's kafka_rows);
// unequal: topics topic0000..topic0499 of 2,000 partitions, members consumer00000..consumer01999
//   on every topic but the last member, on topic0000 only; the second rebalance, every member but
//   the first bringing what the first rebalance gave it (the port's general_rows).
// Prints one JSON line: {"case", "assignor", "ms": [each rep's assign() time]}; only the call
// to assign() is timed, each rep with a new assignor.
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class KafkaBench {
    static ConsumerPartitionAssignor assignor(String name) {
        return name.equals("sticky") ? new StickyAssignor() : new CooperativeStickyAssignor();
    }

    // What a member's own client sends: its topics, what it owns and its generation (and, for the
    // eager assignor, the user data its StickyAssignor encodes after its last assignment).
    static Subscription subscription(String name, List<String> topics, List<TopicPartition> owned,
                                     int generation) {
        ByteBuffer userData = null;
        if (name.equals("sticky") && generation >= 0) {
            StickyAssignor own = new StickyAssignor();
            own.onAssignment(new ConsumerPartitionAssignor.Assignment(owned),
                             new ConsumerGroupMetadata("g", generation, "m", Optional.empty()));
            userData = own.subscriptionUserData(new HashSet<>(topics));
        }
        return new Subscription(topics, userData, owned, generation, Optional.empty());
    }

    static Cluster cluster(Map<String, Integer> topics) {
        Node node = new Node(0, "127.0.0.1", 9092);
        List<PartitionInfo> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> e : topics.entrySet())
            for (int p = 0; p < e.getValue(); p++)
                parts.add(new PartitionInfo(e.getKey(), p, node, new Node[]{node}, new Node[]{node}));
        return new Cluster("rocketlb", Collections.singletonList(node), parts,
                           Collections.emptySet(), Collections.emptySet());
    }

    public static void main(String[] args) {
        String kase = args[0], name = args[1];
        int reps = Integer.parseInt(args[2]);
        Map<String, Integer> topics = new LinkedHashMap<>();
        Map<String, Subscription> group = new LinkedHashMap<>();
        if (kase.equals("large")) {
            int partitions = 1_000_000, members = 2_000;
            topics.put("T", partitions);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < members; i++)
                ids.add(String.format("consumer-%05d-%08d", i, (i * 2654435761L) % 100_000_000L));
            List<String> before = ids.subList(0, members - 8);
            Map<String, List<TopicPartition>> owned = new HashMap<>();
            for (int p = 0; p < partitions; p++)
                owned.computeIfAbsent(before.get(p % before.size()), k -> new ArrayList<>())
                     .add(new TopicPartition("T", p));
            for (String m : ids) {
                List<TopicPartition> mine = owned.getOrDefault(m, Collections.emptyList());
                group.put(m, subscription(name, List.of("T"), mine, owned.containsKey(m) ? 1 : -1));
            }
        } else {
            int n = 500, partitions = 2_000, members = 2_000;
            List<String> names = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                names.add(String.format("topic%04d", i));
                topics.put(names.get(i), partitions);
            }
            Map<String, List<String>> subs = new LinkedHashMap<>();
            for (int i = 0; i < members; i++)
                subs.put(String.format("consumer%05d", i), i == members - 1 ? names.subList(0, 1) : names);
            Map<String, Subscription> first = new LinkedHashMap<>();
            subs.forEach((m, t) -> first.put(m, subscription(name, t, Collections.emptyList(), -1)));
            Map<String, ConsumerPartitionAssignor.Assignment> a = assignor(name)
                .assign(cluster(topics), new GroupSubscription(first)).groupAssignment();
            boolean skip = true;
            for (Map.Entry<String, List<String>> e : subs.entrySet()) {
                if (skip) { skip = false; continue; }
                group.put(e.getKey(), subscription(name, e.getValue(),
                                                   a.get(e.getKey()).partitions(), 1));
            }
        }
        Cluster cluster = cluster(topics);
        StringBuilder ms = new StringBuilder();
        for (int r = 0; r < reps; r++) {
            // Fresh subscriptions each rep: reading the eager assignor's user data moves the
            // buffer's position, so a second assign() of the same objects would see none.
            Map<String, Subscription> fresh = new LinkedHashMap<>();
            group.forEach((m, s) -> fresh.put(m, new Subscription(
                s.topics(), s.userData() == null ? null : s.userData().duplicate(),
                s.ownedPartitions(), s.generationId().orElse(-1), Optional.empty())));
            GroupSubscription g = new GroupSubscription(fresh);
            ConsumerPartitionAssignor assignor = assignor(name);
            long t0 = System.nanoTime();
            assignor.assign(cluster, g);
            long t1 = System.nanoTime();
            ms.append(r == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.1f", (t1 - t0) / 1e6));
        }
        System.out.println("{\"case\": \"" + kase + "\", \"assignor\": \"" + name + "\", \"ms\": [" + ms + "]}");
    }
}
