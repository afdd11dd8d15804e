// Conformance vectors for Kafka's built-in producer partitioner (issue 16), from kafka-clients'
// own BuiltInPartitioner (KIP-794: sticky partitions switched after batch.size bytes, chosen with
// weights from the queue sizes the accumulator reports) and Utils.murmur2 (keyed records).
// This class sits in Kafka's package to reach the package-private methods the producer calls,
// and replaces its random draw (the seam Kafka's own tests use: randomPartition() from 3.5, the
// static mockRandom supplier before) with a seeded java.util.Random instead of
// ThreadLocalRandom; every draw is written into the vector as an input. Built and run by
// `python -m rocketlb_core.kafka.vectors`.
package org.apache.kafka.clients.producer.internals;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.*;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Utils;

public final class PartitionerVectors {
    static final class Seeded extends BuiltInPartitioner {
        final Random rnd;
        final List<Integer> draws = new ArrayList<>();
        Seeded(String topic, int stickyBatchSize, Random rnd) {
            super(new LogContext(), topic, stickyBatchSize);
            this.rnd = rnd;
            try {       // releases before 3.5: a static supplier, read on every draw
                java.lang.reflect.Field mock = BuiltInPartitioner.class.getField("mockRandom");
                java.util.function.Supplier<Integer> draw = this::randomPartition;
                mock.set(null, draw);
            } catch (NoSuchFieldException e) {
                // 3.5 and later call randomPartition(), which this class overrides
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        // overrides BuiltInPartitioner.randomPartition() where it exists (3.5 and later)
        int randomPartition() {
            int r = Utils.toPositive(rnd.nextInt());
            draws.add(r);
            return r;
        }
    }

    public static void main(String[] args) {
        long seed = Long.parseLong(args[0]);
        int scenarios = Integer.parseInt(args[1]);
        String version = args[2];
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Random rnd = new Random(seed);
        META = args.length > 3 && args[3].equals("metadata");
        for (int s = 0; s < scenarios; s++)
            out.println(scenario(String.format(META ? "partitioner-metadata-%05d" : "partitioner-%05d", s),
                                 version, rnd));
        out.flush();
    }

    // "metadata" (issue 33): scenarios whose metadata changes between steps: before one step in
    // six, a {"op": "metadata", "available": [...]} step hands the partitioner a new Cluster, where
    // partitions lose or regain their leader (one in four flips; one change in twelve leaves none
    // with a leader) and, one change in three, the topic grows by 1 to 8 partitions (new ones led
    // but for one in four). Keyed records and the accumulator's stats then use the new count.
    static boolean META = false;

    static Cluster cluster(String topic, Node node, List<Boolean> up) {
        List<PartitionInfo> parts = new ArrayList<>();
        for (int p = 0; p < up.size(); p++)
            parts.add(new PartitionInfo(topic, p, up.get(p) ? node : null, new Node[]{node}, new Node[]{node}));
        return new Cluster("c", Collections.singletonList(node), parts, Collections.emptySet(), Collections.emptySet());
    }

    static String bools(List<Boolean> xs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) { if (i > 0) sb.append(','); sb.append(xs.get(i)); }
        return sb.append(']').toString();
    }

    static String scenario(String id, String version, Random rnd) {
        String topic = "T";
        int n = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 64 : 12);
        Node node = new Node(0, "127.0.0.1", 9092);
        List<Boolean> up = new ArrayList<>();
        boolean someDown = rnd.nextInt(3) == 0;
        for (int p = 0; p < n; p++) up.add(!someDown || rnd.nextInt(3) != 0);
        String partsJson = bools(up);
        Cluster cluster = cluster(topic, node, up);
        int batch = rnd.nextBoolean() ? 16384 : 1 + rnd.nextInt(4096);
        Seeded bp = new Seeded(topic, batch, new Random(rnd.nextLong()));
        StringBuilder steps = new StringBuilder("[");
        int nSteps = 10 + rnd.nextInt(40);
        for (int k = 0; k < nSteps; k++) {
            if (k > 0) steps.append(',');
            bp.draws.clear();
            if (META && rnd.nextInt(6) == 0) {
                boolean none = rnd.nextInt(12) == 0;
                for (int p = 0; p < n; p++) up.set(p, !none && (rnd.nextInt(4) == 0 ? !up.get(p) : up.get(p)));
                int grow = rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(8) : 0;
                for (int g = 0; g < grow; g++) up.add(!none && rnd.nextInt(4) != 0);
                n += grow;
                cluster = cluster(topic, node, up);
                steps.append("{\"op\":\"metadata\",\"available\":").append(bools(up)).append('}');
                continue;
            }
            int op = rnd.nextInt(10);
            if (op < 2) {
                // the accumulator's load stats: queue sizes of the partitions with a leader
                int length = rnd.nextInt(5) == 0 ? 0 : rnd.nextInt(n + 1);
                int[] sizes = new int[n];
                int[] ids = new int[n];
                List<Integer> order = new ArrayList<>();
                for (int p = 0; p < n; p++) order.add(p);
                Collections.shuffle(order, rnd);
                for (int i = 0; i < n; i++) { sizes[i] = rnd.nextInt(rnd.nextBoolean() ? 3 : 40); ids[i] = order.get(i); }
                boolean none = rnd.nextInt(10) == 0;
                steps.append("{\"op\":\"stats\",\"queue_sizes\":").append(none ? "null" : ints(sizes))
                     .append(",\"partition_ids\":").append(ints(ids)).append(",\"length\":").append(length);
                bp.updatePartitionLoadStats(none ? null : sizes, ids, length);
                steps.append('}');
            } else if (op < 3) {
                byte[] key = new byte[rnd.nextInt(rnd.nextBoolean() ? 8 : 64)];
                rnd.nextBytes(key);
                steps.append("{\"op\":\"key\",\"key\":\"").append(hex(key)).append("\",\"partitions\":").append(n)
                     .append(",\"partition\":").append(BuiltInPartitioner.partitionForKey(key, n)).append('}');
            } else {
                int bytes = 1 + rnd.nextInt(rnd.nextBoolean() ? 200 : Math.max(1, batch));
                boolean enableSwitch = rnd.nextInt(4) != 0;
                BuiltInPartitioner.StickyPartitionInfo info = bp.peekCurrentPartitionInfo(cluster);
                int used = info.partition();
                bp.updatePartitionInfo(info, bytes, cluster, enableSwitch);
                int next = bp.peekCurrentPartitionInfo(cluster).partition();
                steps.append("{\"op\":\"append\",\"bytes\":").append(bytes)
                     .append(",\"enable_switch\":").append(enableSwitch)
                     .append(",\"partition\":").append(used).append(",\"next\":").append(next);
                steps.append(",\"draws\":").append(ints(bp.draws)).append('}');
            }
        }
        steps.append(']');
        return "{\"id\":\"" + id + "\",\"partitioner\":\"builtin\",\"source\":{\"artifact\":\"org.apache.kafka:kafka-clients\",\"version\":\""
            + version + "\"},\"available\":" + partsJson + ",\"sticky_batch_size\":" + batch
            + ",\"steps\":" + steps + "}";
    }

    static String ints(int[] xs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < xs.length; i++) { if (i > 0) sb.append(','); sb.append(xs[i]); }
        return sb.append(']').toString();
    }

    static String ints(List<Integer> xs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) { if (i > 0) sb.append(','); sb.append(xs.get(i)); }
        return sb.append(']').toString();
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }
}
