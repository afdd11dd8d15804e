// Conformance vectors from Kafka's own released classes (issue 16): seeded random consumer
// groups run through kafka-clients' assignors, one JSON object per line on stdout. Built and run
// by `python -m rocketlb_core.kafka.vectors` against the jars Maven resolves; nothing here is
// computed by hand. Inputs are kept exactly as handed to the assignor: members in the order they
// were put into the group's HashMap (as ConsumerCoordinator builds it from the JoinGroup
// response), each member's topics as its subscription list.
import java.nio.charset.StandardCharsets;
import java.io.PrintStream;
import java.util.*;
import java.util.concurrent.*;

import java.nio.ByteBuffer;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class KafkaVectors {
    private static final String ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
    private static final String[] ODD = {"\u00e9", "\u4e2d", "\ud83d\ude00", "Z", "_", "0"};

    public static void main(String[] args) {
        String assignorName = args[0];
        long seed = Long.parseLong(args[1]);
        int cases = Integer.parseInt(args[2]);
        String version = args[3];
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Random rnd = new Random(seed);
        boolean unequal = args.length > 4 && args[4].equals("unequal");
        boolean collide = args.length > 4 && args[4].equals("collide");
        GEN_SUB = args.length > 4 && args[4].equals("generations");
        RACKS = args.length > 4 && args[4].equals("racks");
        for (int c = 0; c < cases; c++) {
            if (RACKS) {
                String id = String.format("%s-racks-%06d", assignorName, c);
                newRackCase(rnd);
                out.println(!assignorName.endsWith("sticky") ? rangeRackCase(assignorName, version, id, rnd)
                            : rnd.nextBoolean() ? stickyCase(assignorName, version, id, rnd)
                            : stickyUnequalCase(assignorName, version, id, rnd));
                continue;
            }
            if (collide) {
                String id = String.format("%s-collide-%06d", assignorName, c);
                out.println(collideCase(assignorName, version, id, rnd, c));
                continue;
            }
            if (GEN_SUB) {
                String id = String.format("%s-generations-%06d", assignorName, c);
                out.println(rnd.nextBoolean() ? stickyCase(assignorName, version, id, rnd)
                                              : stickyUnequalCase(assignorName, version, id, rnd));
                continue;
            }
            if (unequal) {
                String id = String.format("%s-unequal-%06d", assignorName, c);
                out.println(stickyUnequalCase(assignorName, version, id, rnd));
                continue;
            }
            String id = String.format("%s-%06d", assignorName, c);
            out.println(assignorName.endsWith("sticky") ? stickyCase(assignorName, version, id, rnd)
                                                       : oneCase(assignorName, version, id, rnd));
        }
        out.flush();
    }

    // The "generations" family (issue 33): subscriptions built as the ConsumerCoordinator builds
    // them, the generation id in the subscription itself for the eager StickyAssignor too (its
    // owned partitions and generation also in its user data), members of generations 1 to 3 and a
    // stale claim in every case that can have one: a partition claimed twice goes to the claimant
    // of the higher generation, which the assignor reads from the other's subscription. The case
    // says so: "generation_in_subscription": true.
    static boolean GEN_SUB = false;

    // Whether a sticky member's subscription carries its generation id: always for the
    // cooperative assignor (ownedPartitions and generation are its member data), for the eager
    // one in the generations family only (elsewhere its generation is in its user data alone).
    // Every sticky case records it ("generation_in_subscription").
    static boolean inSubscription(String assignorName) {
        return GEN_SUB || !assignorName.equals("sticky");
    }

    static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    static String name(Random rnd, String prefix) {
        StringBuilder sb = new StringBuilder(prefix);
        int n = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 30 : 8);
        for (int i = 0; i < n; i++) {
            if (rnd.nextInt(25) == 0) sb.append(ODD[rnd.nextInt(ODD.length)]);
            else sb.append(ALPHA.charAt(rnd.nextInt(ALPHA.length())));
        }
        return sb.toString();
    }

    static String consumerId(Random rnd) {
        return name(rnd, "c-") + "-" + new UUID(rnd.nextLong(), rnd.nextLong()).toString().substring(0, 13);
    }

    // n topics of random names, each of 1 to `big` partitions (one in three) or 1 to `small`.
    static LinkedHashMap<String, Integer> randomTopics(Random rnd, int n, int big, int small) {
        LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        while (topics.size() < n) {
            String t = name(rnd, rnd.nextBoolean() ? "topic-" : "");
            topics.put(t, 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? big : small));
        }
        return topics;
    }

    // The first rebalance of a sticky case, from no assignment: each member's partitions, or
    // null when the assignor did not return (`mustReturn`: an error then).
    static Map<String, List<TopicPartition>> firstRebalance(String assignorName, String id, Map<String, Integer> topics,
                                                            List<String> first,
                                                            java.util.function.Function<String, List<String>> topicsOf,
                                                            Map<String, String> instances, boolean mustReturn) {
        Map<String, Subscription> g1 = new HashMap<>();
        for (String m : first) g1.put(m, subscription(assignorName, m, topicsOf.apply(m), null, -1, instances.get(m)));
        Map<String, ConsumerPartitionAssignor.Assignment> a1 = assign(assignorName, topics, g1);
        if (a1 == null) {
            if (mustReturn) throw new IllegalStateException(id + ": the first rebalance did not return");
            return null;
        }
        Map<String, List<TopicPartition>> before = new HashMap<>();
        for (String m : first) before.put(m, new ArrayList<>(a1.get(m).partitions()));
        return before;
    }

    static String oneCase(String assignorName, String version, String id, Random rnd) {
        // topics and their partition counts (0: the topic has no metadata)
        int nTopics = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 8 : 3);
        LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        while (topics.size() < nTopics) {
            String t = name(rnd, rnd.nextBoolean() ? "topic-" : "");
            int n = rnd.nextInt(12) == 0 ? 0 : 1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 100 : 24);
            topics.put(t, n);
        }
        List<String> topicNames = new ArrayList<>(topics.keySet());
        // members: ids like the consumer's (client id + "-" + UUID), some static
        int nMembers = 1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 40 : 12);
        boolean equalSubscriptions = rnd.nextBoolean();
        List<String> shared = subset(rnd, topicNames);
        LinkedHashMap<String, Subscription> members = new LinkedHashMap<>();
        Map<String, String> instances = new HashMap<>();
        Set<String> usedInstances = new HashSet<>();
        StringBuilder membersJson = new StringBuilder("[");
        while (members.size() < nMembers) {
            // most like the consumer's own ids (client id, "-", a UUID), some short and odd
            String memberId = rnd.nextInt(3) == 0 ? name(rnd, "")
                : consumerId(rnd);
            if (members.containsKey(memberId)) continue;
            List<String> subs = equalSubscriptions ? new ArrayList<>(shared) : subset(rnd, topicNames);
            Subscription s = new Subscription(subs, null, Collections.emptyList());
            String instance = null;
            if (rnd.nextInt(4) == 0) {
                instance = name(rnd, "instance-");
                if (!usedInstances.add(instance)) instance = null;
            }
            if (instance != null) s.setGroupInstanceId(Optional.of(instance));
            members.put(memberId, s);
            if (members.size() > 1) membersJson.append(',');
            membersJson.append("{\"id\":").append(str(memberId))
                .append(",\"instance\":").append(instance == null ? "null" : str(instance))
                .append(rackJson(memberId))
                .append(",\"topics\":").append(strs(subs)).append('}');
        }
        membersJson.append(']');

        Map<String, Subscription> group = new HashMap<>();
        for (Map.Entry<String, Subscription> e : members.entrySet()) group.put(e.getKey(), e.getValue());
        return caseJson(id, assignorName, version, topics, membersJson,
                        expected(assignorName, topics, group, members.keySet()));
    }

    // Each member's partitions as runs of one topic, in the assignment's order:
    // {member: [[topic, [p, ...]], ...]}, or the exception the assignor threw, or NoTermination
    // when it did not return (Kafka's general sticky builder can move partitions in a cycle forever).
    static String expected(String assignorName, Map<String, Integer> topics,
                           Map<String, Subscription> group, Collection<String> order) {
        StringBuilder expected = new StringBuilder("{");
        try {
            Map<String, ConsumerPartitionAssignor.Assignment> result = assign(assignorName, topics, group);
            if (result == null)
                return "{\"error\":{\"type\":\"NoTermination\",\"message\":\"the assignor did not return within "
                    + LIMIT_SECONDS + " s\"}}";
            boolean first = true;
            for (String m : order) {
                if (!first) expected.append(',');
                first = false;
                ConsumerPartitionAssignor.Assignment a = result.get(m);
                expected.append(str(m)).append(':').append(a == null ? "null" : runs(a.partitions()));
            }
            return expected.append('}').toString();
        } catch (RuntimeException ex) {
            return "{\"error\":{\"type\":" + str(ex.getClass().getSimpleName())
                + ",\"message\":" + str(String.valueOf(ex.getMessage())) + "}}";
        }
    }

    // A case takes milliseconds; one that has not returned after this long is in a loop that does
    // not end (its thread is left spinning, a daemon, and a fresh one runs the next case).
    static final int LIMIT_SECONDS = 20;
    static ExecutorService pool = newPool();

    static ExecutorService newPool() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "assign");
            t.setDaemon(true);
            return t;
        });
    }

    // The group assignment, or null when the assignor did not return within LIMIT_SECONDS.
    static Map<String, ConsumerPartitionAssignor.Assignment> assign(String assignorName, Map<String, Integer> topics,
                                                                    Map<String, Subscription> group) {
        Future<Map<String, ConsumerPartitionAssignor.Assignment>> f = pool.submit(
            () -> assignor(assignorName).assign(cluster(topics), new GroupSubscription(group)).groupAssignment());
        try {
            return f.get(LIMIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            pool = newPool();
            return null;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw new IllegalStateException(e.getCause());
        }
    }

    static String caseJson(String id, String assignorName, String version, Map<String, Integer> topics,
                           CharSequence membersJson, String expected) {
        StringBuilder topicsJson = new StringBuilder("[");
        boolean first = true;
        for (Map.Entry<String, Integer> e : topics.entrySet()) {
            if (!first) topicsJson.append(',');
            first = false;
            topicsJson.append('[').append(str(e.getKey())).append(',').append(e.getValue()).append(']');
        }
        topicsJson.append(']');
        return "{\"id\":" + str(id) + ",\"assignor\":" + str(assignorName)
            + (assignorName.endsWith("sticky") ? ",\"generation_in_subscription\":" + inSubscription(assignorName) : "")
            + ",\"source\":{\"artifact\":\"org.apache.kafka:kafka-clients\",\"version\":" + str(version) + "}"
            + ",\"topics\":" + topicsJson + ",\"racks\":" + racksJson(topics)
            + ",\"members\":" + membersJson
            + ",\"expected\":" + expected + "}";
    }

    // The sticky assignors need a history: a first rebalance of a group with no owners, then the
    // case itself, a second rebalance after members left and joined (and, in some cases, topics
    // grew), where the members that stayed bring what they were given (the eager StickyAssignor in
    // its user data, encoded by the member's own assignor instance; the cooperative one in the
    // subscription's owned partitions and generation). Some cases add a stale claim: a member also
    // claims a partition another owns, in the same or an older generation. Subscriptions are equal
    // (the constrained assignment builder; stickyUnequalCase has the general one).
    static String stickyCase(String assignorName, String version, String id, Random rnd) {
        LinkedHashMap<String, Integer> topics = randomTopics(rnd, 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 6 : 2), 64, 16);
        List<String> shared = new ArrayList<>(topics.keySet());
        int n1 = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 30 : 10);
        List<String> first = new ArrayList<>();
        Map<String, String> instances = new HashMap<>();
        while (first.size() < n1) {
            String m = consumerId(rnd);
            if (!first.contains(m)) first.add(m);
            if (rnd.nextInt(5) == 0) instances.put(m, name(rnd, "instance-"));
        }
        boolean history = rnd.nextInt(5) != 0;
        Map<String, List<TopicPartition>> before = new HashMap<>();
        List<String> members = new ArrayList<>(first);
        if (history) {
            before = firstRebalance(assignorName, id, topics, first, m -> shared, instances, true);
            members = new ArrayList<>();
            for (String m : first) if (rnd.nextInt(10) < 7) members.add(m);
            int joining = rnd.nextInt(rnd.nextInt(3) == 0 ? 12 : 4);
            for (int j = 0; j < joining; j++) {
                String m = consumerId(rnd);
                if (!members.contains(m) && !first.contains(m)) members.add(m);
            }
            if (members.isEmpty()) members.add(first.get(0));
            if (rnd.nextInt(6) == 0)
                for (String t : shared) topics.put(t, topics.get(t) + rnd.nextInt(8));
        }
        Map<String, Integer> generation = generations(history, rnd, 6, members, before);
        return stickyGroup(assignorName, version, id, topics, members, m -> {
            List<String> subs = new ArrayList<>(shared);
            Collections.shuffle(subs, rnd);
            return subs;
        }, before, generation, instances);
    }

    // Which members bring a generation (those that were in the first rebalance), and, in one case
    // in `odds`, a stale claim: a member also claims another's partition, in the same or an older
    // generation.
    static Map<String, Integer> generations(boolean history, Random rnd, int odds, List<String> members,
                                            Map<String, List<TopicPartition>> before) {
        Map<String, Integer> generation = new HashMap<>();
        for (String m : members)
            if (history && before.containsKey(m)) generation.put(m, GEN_SUB ? 1 + rnd.nextInt(3) : 1);
        if (history && (GEN_SUB || rnd.nextInt(odds) == 0) && members.size() > 1) {
            String a = members.get(rnd.nextInt(members.size()));
            String b = members.get(rnd.nextInt(members.size()));
            List<TopicPartition> theirs = before.getOrDefault(b, Collections.emptyList());
            if (!a.equals(b) && !theirs.isEmpty()) {
                before.computeIfAbsent(a, k -> new ArrayList<>()).add(theirs.get(rnd.nextInt(theirs.size())));
                generation.put(a, GEN_SUB ? rnd.nextInt(4) : rnd.nextBoolean() ? 1 : 0);
            }
        }
        return generation;
    }

    // The second rebalance of a sticky case: each member's subscription (its topics as
    // `topicsOf` gives them, in member order), what it owned and its generation, and the result.
    // Without a history (`before` null: plainGroup) a member owns nothing and has no generation,
    // and its row says neither.
    static String stickyGroup(String assignorName, String version, String id, Map<String, Integer> topics,
                              List<String> members, java.util.function.Function<String, List<String>> topicsOf,
                              Map<String, List<TopicPartition>> before, Map<String, Integer> generation,
                              Map<String, String> instances) {
        Map<String, Subscription> group = new HashMap<>();
        StringBuilder membersJson = new StringBuilder("[");
        for (int i = 0; i < members.size(); i++) {
            String m = members.get(i);
            List<String> subs = topicsOf.apply(m);
            List<TopicPartition> owned = before == null ? null : before.getOrDefault(m, Collections.emptyList());
            Integer gen = before == null ? null : generation.get(m);
            group.put(m, subscription(assignorName, m, subs, owned, gen == null ? -1 : gen, instances.get(m)));
            if (i > 0) membersJson.append(',');
            membersJson.append("{\"id\":").append(str(m))
                .append(",\"instance\":").append(instances.containsKey(m) ? str(instances.get(m)) : "null")
                .append(rackJson(m))
                .append(",\"topics\":").append(strs(subs));
            if (before != null)
                membersJson.append(",\"owned\":").append(runs(owned))
                    .append(",\"generation\":").append(gen == null ? "null" : gen.toString());
            membersJson.append('}');
        }
        membersJson.append(']');
        return caseJson(id, assignorName, version, topics, membersJson,
                        expected(assignorName, topics, group, members));
    }

    // The sticky assignors on groups whose members subscribe to different topics (the general
    // assignment builder). A history as in stickyCase, where the members that stay may also change
    // their subscription, topics may grow or lose their metadata, and a stale claim may name a
    // partition the claimant no longer subscribes to.
    static String stickyUnequalCase(String assignorName, String version, String id, Random rnd) {
        LinkedHashMap<String, Integer> topics = randomTopics(rnd, 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 7 : 4), 48, 12);
        List<String> names = new ArrayList<>(topics.keySet());
        int n1 = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 24 : 8);
        List<String> first = new ArrayList<>();
        Map<String, List<String>> subs = new HashMap<>();
        Map<String, String> instances = new HashMap<>();
        while (first.size() < n1) {
            String m = consumerId(rnd);
            if (first.contains(m)) continue;
            first.add(m);
            subs.put(m, rnd.nextInt(8) == 0 ? new ArrayList<>(names) : subset(rnd, names));
            if (rnd.nextInt(5) == 0) instances.put(m, name(rnd, "instance-"));
        }
        boolean history = rnd.nextInt(6) != 0;
        Map<String, List<TopicPartition>> before = new HashMap<>();
        List<String> members = new ArrayList<>(first);
        if (history) {
            before = firstRebalance(assignorName, id, topics, first, subs::get, instances, true);
            members = new ArrayList<>();
            for (String m : first) {
                if (rnd.nextInt(10) >= 7) continue;
                members.add(m);
                if (rnd.nextInt(10) < 3) subs.put(m, subset(rnd, names));
            }
            int joining = rnd.nextInt(rnd.nextInt(3) == 0 ? 10 : 4);
            for (int j = 0; j < joining; j++) {
                String m = consumerId(rnd);
                if (members.contains(m) || first.contains(m)) continue;
                members.add(m);
                subs.put(m, subset(rnd, names));
            }
            if (members.isEmpty()) members.add(first.get(0));
            if (rnd.nextInt(6) == 0)
                for (String t : names) topics.put(t, topics.get(t) + rnd.nextInt(8));
            if (rnd.nextInt(10) == 0)
                topics.put(names.get(rnd.nextInt(names.size())), 0);
        }
        Map<String, Integer> generation = generations(history, rnd, 5, members, before);
        return stickyGroup(assignorName, version, id, topics, members, subs::get, before, generation,
                           instances);
    }

    // ---------------------------------------------------------------- the colliding family
    // Member ids and topic names built to collide in Java's HashMaps (issue 33): many keys with
    // one String.hashCode (blocks of "Aa" and "BB", which hash alike), keys of different hashes
    // in one bucket of every table up to 2^bits buckets, and ordinary names, for groups of 1 to
    // ~800 members or topics (tables of 16 to 1024 buckets). The first three cases are fixed:
    // the minimal cases of issue 33 and one more (computeIfAbsent on a key already present), then
    // the random ones.

    static final String[][] EQUAL_IDS = {{"AaAaAa", "AaAaBB", "AaBBAa", "AaBBBB", "BBAaAa", "BBAaBB", "BBBBAa", "BBBBBB"}};

    static String collideCase(String assignorName, String version, String id, Random rnd, int c) {
        boolean sticky = assignorName.endsWith("sticky");
        List<String> eight = Arrays.asList(EQUAL_IDS[0]);
        List<String> thirteen = new ArrayList<>();
        for (int i = 1; i <= 13; i++) thirteen.add("t" + i);
        if (c == 0) {       // eight member ids of one hash, one topic of eight partitions
            LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
            topics.put("t", 8);
            if (sticky)
                return stickyGroup(assignorName, version, id, topics, eight, m -> Arrays.asList("t"),
                                   new HashMap<>(), new HashMap<>(), new HashMap<>());
            return plainGroup(assignorName, version, id, topics, eight, m -> Arrays.asList("t"), new HashMap<>());
        }
        if (c == 1 || c == 2) {
            // c 1: one consumer on t1 ... t13, one partition each (computeIfAbsent's late growth);
            // c 2: the same on two partitions a topic: computeIfAbsent on a present key grows the table
            int partitions = c;
            LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
            for (String t : thirteen) topics.put(t, partitions);
            if (sticky) {   // m0 on t13 with no history; m1 on t6 and t10, generation 1, owned t1-0 ... t13-0 (and t1-1 ...)
                Map<String, List<TopicPartition>> before = new HashMap<>();
                List<TopicPartition> owned = new ArrayList<>();
                for (String t : thirteen)
                    for (int p = 0; p < partitions; p++) owned.add(new TopicPartition(t, p));
                before.put("m1", owned);
                Map<String, Integer> generation = new HashMap<>();
                generation.put("m1", 1);
                return stickyGroup(assignorName, version, id, topics, Arrays.asList("m0", "m1"),
                                   m -> m.equals("m0") ? Arrays.asList("t13") : Arrays.asList("t6", "t10"),
                                   before, generation, new HashMap<>());
            }
            return plainGroup(assignorName, version, id, topics,
                              c == 1 ? Arrays.asList("c") : Arrays.asList("c0", "c1"), m -> thirteen, new HashMap<>());
        }
        return sticky ? stickyCollideCase(assignorName, version, id, rnd)
                      : plainCollideCase(assignorName, version, id, rnd);
    }

    // 1 to `most` (log-uniform): from one key to tables of 1024 buckets.
    static int sizeDraw(Random rnd, int most) {
        return Math.max(1, Math.min(most, (int) Math.pow(2, rnd.nextDouble() * (Math.log(most) / Math.log(2)))));
    }

    static int spread(String s) {
        int h = s.hashCode();
        return h ^ (h >>> 16);
    }

    // `n` distinct names starting with `prefix`, in chunks: a family of one hash, a family of
    // different hashes in one bucket (sometimes the bucket of an earlier family), or ordinary names.
    static List<String> colliding(Random rnd, int n, String prefix) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        List<Integer> spreads = new ArrayList<>();
        String stemChars = "abcxyz019-_";
        while (out.size() < n) {
            int want = 1 + rnd.nextInt(Math.min(n - out.size(), rnd.nextBoolean() ? 16 : 300));
            int kind = rnd.nextInt(5);
            StringBuilder stem = new StringBuilder(prefix);
            for (int i = rnd.nextInt(4); i > 0; i--) stem.append(stemChars.charAt(rnd.nextInt(stemChars.length())));
            if (kind <= 1) {            // one hash: want <= 2^blocks strings of "Aa"/"BB" blocks
                int blocks = 1;
                while ((1 << blocks) < want) blocks++;
                List<String> family = new ArrayList<>();
                String tail = rnd.nextBoolean() ? "" : "-" + rnd.nextInt(10);
                for (int i = 0; i < (1 << blocks); i++) {
                    StringBuilder sb = new StringBuilder(stem);
                    for (int b = 0; b < blocks; b++) sb.append((i >> b & 1) == 1 ? "BB" : "Aa");
                    family.add(sb.append(tail).toString());
                }
                Collections.shuffle(family, rnd);
                for (String f : family.subList(0, want)) out.add(f);
                spreads.add(spread(family.get(0)));
            } else if (kind <= 3) {     // different hashes, one bucket of every table up to 2^bits
                int bits = 4 + rnd.nextInt(7);
                int mask = (1 << bits) - 1;
                int target = !spreads.isEmpty() && rnd.nextBoolean()
                    ? spreads.get(rnd.nextInt(spreads.size())) & mask : rnd.nextInt(1 << bits);
                int got = 0;
                while (got < want) {
                    StringBuilder sb = new StringBuilder(stem);
                    for (int i = 0; i < 4; i++) sb.append(ALPHA.charAt(rnd.nextInt(ALPHA.length())));
                    String s = sb.toString();
                    if ((spread(s) & mask) == target && out.add(s)) got++;
                }
                spreads.add(target);
            } else {
                while (want-- > 0) out.add(name(rnd, prefix));
            }
        }
        List<String> names = new ArrayList<>(out);
        while (names.size() > n) names.remove(names.size() - 1);
        if (rnd.nextBoolean()) Collections.shuffle(names, rnd);
        return names;
    }

    // A group without history: members in `members` order, each on `topicsOf`'s topics.
    static String plainGroup(String assignorName, String version, String id, Map<String, Integer> topics,
                             List<String> members, java.util.function.Function<String, List<String>> topicsOf,
                             Map<String, String> instances) {
        return stickyGroup(assignorName, version, id, topics, members, topicsOf, null, null, instances);
    }

    // Members, topics or both built to collide; subscriptions small enough to keep a case small.
    static String plainCollideCase(String assignorName, String version, String id, Random rnd) {
        int mode = rnd.nextInt(3);      // 0: member ids collide, 1: topic names, 2: both
        int nMembers = mode == 1 ? 1 + rnd.nextInt(4) : sizeDraw(rnd, 800);
        int nTopics = mode == 0 ? 1 + rnd.nextInt(3) : sizeDraw(rnd, Math.max(1, Math.min(800, 6000 / nMembers)));
        List<String> memberIds = mode == 1 && rnd.nextBoolean() ? colliding(rnd, nMembers, "c-")
            : mode == 1 ? randomNames(rnd, nMembers, "c-") : colliding(rnd, nMembers, rnd.nextBoolean() ? "c-" : "");
        List<String> topicNames = mode == 0 ? randomNames(rnd, nTopics, "topic-") : colliding(rnd, nTopics, rnd.nextBoolean() ? "t" : "");
        LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        int spread = Math.max(1, Math.min(64, 2000 / nTopics));
        for (String t : topicNames)
            topics.put(t, rnd.nextInt(20) == 0 ? 0 : 1 + rnd.nextInt(Math.max(1, Math.min(spread, 2 * nMembers))));
        boolean equal = rnd.nextInt(3) != 0;
        Map<String, List<String>> subs = new HashMap<>();
        List<String> shared = nTopics > 1 && rnd.nextBoolean() ? subset(rnd, topicNames) : new ArrayList<>(topicNames);
        for (String m : memberIds) subs.put(m, equal ? shared : subset(rnd, topicNames));
        Map<String, String> instances = new HashMap<>();
        for (String m : memberIds) if (rnd.nextInt(8) == 0) instances.put(m, "instance-" + m);
        return plainGroup(assignorName, version, id, topics, memberIds, subs::get, instances);
    }

    static List<String> randomNames(Random rnd, int n, String prefix) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        while (out.size() < n) out.add(name(rnd, prefix));
        return new ArrayList<>(out);
    }

    // The sticky assignors on colliding names, with a history as in stickyUnequalCase; equal
    // subscriptions in half the cases (the constrained builder), different ones in the others
    // (the general builder, on smaller groups: it is quadratic).
    static String stickyCollideCase(String assignorName, String version, String id, Random rnd) {
        boolean equal = rnd.nextBoolean();
        int mode = rnd.nextInt(3);      // 0: member ids collide, 1: topic names, 2: both
        int most = equal ? 800 : 120;
        int n1 = mode == 1 ? 1 + rnd.nextInt(6) : sizeDraw(rnd, most);
        int nTopics = mode == 0 ? 1 + rnd.nextInt(3) : sizeDraw(rnd, Math.max(1, Math.min(equal ? 400 : 60, 3000 / n1)));
        List<String> topicNames = mode == 0 ? randomNames(rnd, nTopics, "topic-") : colliding(rnd, nTopics, rnd.nextBoolean() ? "t" : "");
        LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        int cap = Math.max(1, Math.min(equal ? 64 : 16, (equal ? 2000 : 300) / nTopics));
        for (String t : topicNames) topics.put(t, 1 + rnd.nextInt(Math.max(1, Math.min(cap, 2 * n1))));
        // more ids than needed: some join in the second rebalance
        List<String> pool = mode == 1 ? randomNames(rnd, n1 + 12, "c-") : colliding(rnd, n1 + 1 + n1 / 3, rnd.nextBoolean() ? "c-" : "");
        List<String> first = new ArrayList<>(pool.subList(0, n1));
        List<String> later = new ArrayList<>(pool.subList(n1, pool.size()));
        Map<String, List<String>> subs = new HashMap<>();
        Map<String, String> instances = new HashMap<>();
        for (String m : pool) {
            subs.put(m, equal ? topicNames : subset(rnd, topicNames));
            if (rnd.nextInt(8) == 0) instances.put(m, "instance-" + m);
        }
        boolean history = rnd.nextInt(6) != 0;
        Map<String, List<TopicPartition>> before = new HashMap<>();
        List<String> members = new ArrayList<>(first);
        if (history) {
            Map<String, List<TopicPartition>> a1 = firstRebalance(assignorName, id, topics, first, subs::get, instances, false);
            if (a1 == null) history = false;
            else {
                before = a1;
                members = new ArrayList<>();
                for (String m : first) {
                    if (rnd.nextInt(10) >= 7) continue;
                    members.add(m);
                    if (!equal && rnd.nextInt(10) < 3) subs.put(m, subset(rnd, topicNames));
                }
                for (String m : later) if (rnd.nextBoolean()) members.add(m);
                if (members.isEmpty()) members.add(first.get(0));
                if (rnd.nextInt(6) == 0)
                    for (String t : topicNames) topics.put(t, topics.get(t) + rnd.nextInt(4));
                if (rnd.nextBoolean()) Collections.shuffle(members, rnd);
            }
        }
        Map<String, Integer> generation = generations(history, rnd, 5, members, before);
        return stickyGroup(assignorName, version, id, topics, members, subs::get, before, generation,
                           instances);
    }

    static Subscription subscription(String assignorName, String member, List<String> topics,
                                     List<TopicPartition> owned, int generation, String instance) {
        Subscription s;
        List<TopicPartition> mine = owned == null ? Collections.emptyList() : owned;
        if (assignorName.equals("sticky")) {
            ByteBuffer userData = null;
            if (generation >= 0) {      // what the member's own StickyAssignor encodes after its last assignment
                StickyAssignor own = new StickyAssignor();
                own.onAssignment(new ConsumerPartitionAssignor.Assignment(mine),
                                 new ConsumerGroupMetadata("g", generation, "m", Optional.empty()));
                userData = own.subscriptionUserData(new HashSet<>(topics));
            }
            s = new Subscription(topics, userData, Collections.emptyList(),
                                 inSubscription(assignorName) ? generation : -1, rack(member));
        } else {
            s = new Subscription(topics, null, mine, generation, rack(member));
        }
        if (instance != null) s.setGroupInstanceId(Optional.of(instance));
        return s;
    }

    static Cluster cluster(Map<String, Integer> topics) {
        if (RACKS) return rackCluster(topics);
        Node node = new Node(0, "127.0.0.1", 9092);
        List<PartitionInfo> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> e : topics.entrySet())
            for (int p = 0; p < e.getValue(); p++)
                parts.add(new PartitionInfo(e.getKey(), p, node, new Node[]{node}, new Node[]{node}));
        return new Cluster("rocketlb", Collections.singletonList(node), parts,
                           Collections.emptySet(), Collections.emptySet());
    }

    // ---------------------------------------------------------------- the racks family (KIP-881)
    // Brokers in racks r0 .. r<n-1> (some without a rack), each partition's replicas on 1 to 3 of
    // them (in one case in six every partition on every broker: racks present, rack-aware
    // assignment not used), consumers with a client.rack in the subscription (mostly one of the
    // brokers' racks; sometimes none, "", or a rack no broker is in). Each case records its
    // partitions' replica racks ("racks": {topic: [[rack or null, ...] per partition]}) and each
    // member's "rack". Replicas are drawn when a partition first appears, from a Random of the case.
    static boolean RACKS = false;
    static Random RR;
    static List<Node> NODES;
    static boolean EVERYWHERE;
    static int N_RACKS;
    static final Map<String, List<Node[]>> REPLICAS = new HashMap<>();
    static final Map<String, String> MEMBER_RACKS = new HashMap<>();

    static void newRackCase(Random rnd) {
        RR = new Random(rnd.nextLong());
        REPLICAS.clear();
        MEMBER_RACKS.clear();
        N_RACKS = 1 + RR.nextInt(4);
        int nNodes = N_RACKS + RR.nextInt(4);
        NODES = new ArrayList<>();
        for (int i = 0; i < nNodes; i++)
            NODES.add(new Node(i, "b" + i, 9092, RR.nextInt(12) == 0 ? null : "r" + (i % N_RACKS)));
        EVERYWHERE = RR.nextInt(6) == 0;
    }

    static Optional<String> rack(String member) {
        if (!RACKS) return Optional.empty();
        if (!MEMBER_RACKS.containsKey(member)) {
            int k = RR.nextInt(40);
            MEMBER_RACKS.put(member, k < 3 ? null : k < 5 ? "" : k < 7 ? "rx" : "r" + RR.nextInt(N_RACKS));
        }
        return Optional.ofNullable(MEMBER_RACKS.get(member));
    }

    static String rackJson(String member) {
        if (!RACKS) return ",\"rack\":null";      // the subscription carries no client.rack
        String r = rack(member).orElse(null);
        return ",\"rack\":" + (r == null ? "null" : str(r));
    }

    static Node[] replicas(String topic, int p) {
        List<Node[]> list = REPLICAS.computeIfAbsent(topic, k -> new ArrayList<>());
        while (list.size() <= p) {
            List<Node> shuffled = new ArrayList<>(NODES);
            Collections.shuffle(shuffled, RR);
            int n = EVERYWHERE ? shuffled.size() : 1 + RR.nextInt(Math.min(3, shuffled.size()));
            list.add(shuffled.subList(0, n).toArray(new Node[0]));
        }
        return list.get(p);
    }

    static Cluster rackCluster(Map<String, Integer> topics) {
        List<PartitionInfo> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> e : topics.entrySet())
            for (int p = 0; p < e.getValue(); p++) {
                Node[] r = replicas(e.getKey(), p);
                parts.add(new PartitionInfo(e.getKey(), p, r[0], r, r));
            }
        return new Cluster("rocketlb", NODES, parts, Collections.emptySet(), Collections.emptySet());
    }

    // Each topic's partitions' replicas' racks as the case's Cluster has them: outside the racks
    // family one replica a partition, on broker 0, which has no rack ([null]).
    static String racksJson(Map<String, Integer> topics) {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Integer> e : topics.entrySet()) {
            if (!first) sb.append(',');
            first = false;
            sb.append(str(e.getKey())).append(":[");
            for (int p = 0; p < e.getValue(); p++) {
                if (p > 0) sb.append(',');
                sb.append('[');
                Node[] r = RACKS ? replicas(e.getKey(), p) : new Node[]{new Node(0, "127.0.0.1", 9092)};
                for (int i = 0; i < r.length; i++) {
                    if (i > 0) sb.append(',');
                    sb.append(r[i].rack() == null ? "null" : str(r[i].rack()));
                }
                sb.append(']');
            }
            sb.append(']');
        }
        return sb.append('}').toString();
    }

    // The range assignor with racks: topics of few partition counts (so that some are
    // co-partitioned: the same consumers and partition count), equal or different subscriptions.
    static String rangeRackCase(String assignorName, String version, String id, Random rnd) {
        int nTopics = 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 6 : 3);
        int[] counts = {1 + rnd.nextInt(8), 1 + rnd.nextInt(24)};
        LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        while (topics.size() < nTopics) {
            String t = name(rnd, rnd.nextBoolean() ? "topic-" : "");
            topics.put(t, rnd.nextInt(15) == 0 ? 0 : rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(40) : counts[rnd.nextInt(2)]);
        }
        List<String> names = new ArrayList<>(topics.keySet());
        int nMembers = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 20 : 8);
        boolean equal = rnd.nextBoolean();
        List<String> members = new ArrayList<>();
        Map<String, List<String>> subs = new HashMap<>();
        Map<String, String> instances = new HashMap<>();
        while (members.size() < nMembers) {
            String m = rnd.nextInt(3) == 0 ? name(rnd, "")
                : consumerId(rnd);
            if (subs.containsKey(m)) continue;
            members.add(m);
            subs.put(m, equal ? names : subset(rnd, names));
            if (rnd.nextInt(6) == 0) instances.put(m, name(rnd, "instance-"));
        }
        return plainGroup(assignorName, version, id, topics, members, subs::get, instances);
    }

    static String runs(List<TopicPartition> tps) {
        StringBuilder sb = new StringBuilder("[");
        String runTopic = null;
        for (TopicPartition tp : tps) {
            if (!tp.topic().equals(runTopic)) {
                if (runTopic != null) sb.append("]],");
                runTopic = tp.topic();
                sb.append('[').append(str(runTopic)).append(",[").append(tp.partition());
            } else {
                sb.append(',').append(tp.partition());
            }
        }
        if (runTopic != null) sb.append("]]");
        return sb.append(']').toString();
    }

    static List<String> subset(Random rnd, List<String> all) {
        List<String> out = new ArrayList<>();
        for (String t : all) if (rnd.nextInt(3) != 0) out.add(t);
        if (out.isEmpty()) out.add(all.get(rnd.nextInt(all.size())));
        Collections.shuffle(out, rnd);
        return out;
    }

    static String strs(List<String> xs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) { if (i > 0) sb.append(','); sb.append(str(xs.get(i))); }
        return sb.append(']').toString();
    }

    static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
            else if (ch < 0x20 || ch > 0x7e) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        return sb.append('"').toString();
    }
}
