// Conformance vectors for KIP-848's server-side assignors (kafka-group-coordinator): the
// UniformAssignor and the RangeAssignor ("uniform", "range"), on groups whose members subscribe
// to the same topics (the homogeneous case). Each case is a
// second rebalance: a first one from no assignment, then members leave and join and the
// coordinator hands the assignor the target assignment of those that stayed. Built and run by
// `python -m rocketlb_core.kafka.vectors`. Inputs are built as the group coordinator builds
// them: the members in a HashMap, each member's assignment an unmodifiable HashMap of topic id
// to a HashSet of partitions (made from the ascending list recorded in the vector).
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.*;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.*;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.MemberAssignmentImpl;

public final class UniformVectors {
    static final class Spec implements GroupSpec {
        final Map<String, Set<Uuid>> subs = new HashMap<>();
        final Map<String, Map<Uuid, Set<Integer>>> assigned = new HashMap<>();
        final Map<String, String> instances = new HashMap<>();     // static members' instance ids
        public Collection<String> memberIds() { return subs.keySet(); }
        // as the coordinator decides it: homogeneous when every member subscribes to the same topics
        public SubscriptionType subscriptionType() {
            return new HashSet<>(subs.values()).size() <= 1 ? SubscriptionType.HOMOGENEOUS
                                                             : SubscriptionType.HETEROGENEOUS;
        }
        public boolean isPartitionAssigned(Uuid t, int p) {
            for (Map<Uuid, Set<Integer>> a : assigned.values()) {
                Set<Integer> s = a.get(t);
                if (s != null && s.contains(p)) return true;
            }
            return false;
        }
        public boolean isPartitionAssignable(Uuid t, int p) { return true; }
        public MemberSubscription memberSubscription(String id) {
            Set<Uuid> s = subs.get(id);
            return new MemberSubscription() {
                public Optional<String> rackId() { return Optional.empty(); }
                public Optional<String> instanceId() { return Optional.ofNullable(instances.get(id)); }
                public Set<Uuid> subscribedTopicIds() { return s; }
            };
        }
        public MemberAssignment memberAssignment(String id) {
            Map<Uuid, Set<Integer>> a = assigned.get(id);
            return new MemberAssignmentImpl(a == null ? Collections.emptyMap() : a);
        }
    }

    public static void main(String[] args) {
        long seed = Long.parseLong(args[0]);
        int cases = Integer.parseInt(args[1]);
        String version = args[2];
        String assignor = args.length > 3 ? args[3] : "uniform";
        boolean unequal = args.length > 4 && args[4].equals("unequal");
        boolean jvm = args.length > 4 && args[4].equals("jvm");
        boolean vanish = args.length > 4 && args[4].equals("vanish");
        boolean empty = args.length > 4 && args[4].equals("empty");
        STATIC = args.length > 4 && args[4].equals("static");
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Random rnd = new Random(seed);
        for (int c = 0; c < cases; c++) {
            String id = String.format(unequal ? "%s-unequal-%06d" : jvm ? "%s-jvm-%06d"
                                      : STATIC ? "%s-static-%06d" : vanish ? "%s-vanish-%06d"
                                      : empty ? "%s-empty-%06d" : "%s-%06d",
                assignor.equals("range") ? "server-range" : assignor, c);
            if (empty) {
                out.println(emptyCase(assignor, id, version, rnd));
                continue;
            }
            if (vanish) {
                out.println(vanishCase(assignor, id, version, rnd));
                continue;
            }
            out.println(unequal || (STATIC && rnd.nextBoolean()) ? unequalCase(assignor, id, version, rnd)
                        : jvm ? jvmCase(assignor, id, version, rnd, c) : oneCase(assignor, id, version, rnd));
        }
        out.flush();
    }

    // "static": members of the second rebalance get group.instance.ids (most of them, in an order
    // unrelated to their member ids), recorded as each member's "instance" (null: dynamic, as
    // every member of the other families is).
    static boolean STATIC = false;

    static String instance(Spec g2, String m, Random rnd) {
        if (!STATIC) return ",\"instance\":null";
        String inst = null;
        if (rnd.nextInt(4) != 0) {
            do inst = (rnd.nextBoolean() ? "i-" : "") + rnd.nextInt(rnd.nextBoolean() ? 20 : 1000);
            while (g2.instances.containsValue(inst));
            g2.instances.put(m, inst);
        }
        return ",\"instance\":" + (inst == null ? "null" : "\"" + inst + "\"");
    }

    static ConsumerGroupPartitionAssignor assignor(String name) {
        return name.equals("range") ? new RangeAssignor() : new UniformAssignor();
    }

    // nTopics topics named topic-0, topic-1, ..., each with a random id and partition count (into
    // names, ids and counts), and the describer the coordinator hands the assignor for them.
    static SubscribedTopicDescriber topics(Random rnd, int nTopics, List<String> names, Map<String, Uuid> ids,
                                           Map<Uuid, Integer> counts) {
        while (names.size() < nTopics) {
            String t = "topic-" + names.size();
            Uuid u = new Uuid(rnd.nextLong(), rnd.nextLong());
            names.add(t);
            ids.put(t, u);
            counts.put(u, 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 64 : 16));
        }
        return describer(counts);
    }

    // The describer the coordinator hands the assignor: each topic id's partition count as counts
    // has it when asked (-1: not in the metadata), no racks.
    static SubscribedTopicDescriber describer(Map<Uuid, Integer> counts) {
        return new SubscribedTopicDescriber() {
            public int numPartitions(Uuid t) { Integer n = counts.get(t); return n == null ? -1 : n; }
            public Set<String> racksForPartition(Uuid t, int p) { return Collections.emptySet(); }
        };
    }

    // The ids of the topics `names`, in a HashSet filled in their order.
    static Set<Uuid> idsOf(List<String> names, Map<String, Uuid> ids) {
        Set<Uuid> out = new HashSet<>();
        for (String t : names) out.add(ids.get(t));
        return out;
    }

    // The first rebalance, from no assignment: each member of `first` (put in that order) on the
    // topic ids `subsOf` gives it.
    static Map<String, MemberAssignment> firstRebalance(String assignorName, List<String> first,
                                                        java.util.function.Function<String, Set<Uuid>> subsOf,
                                                        SubscribedTopicDescriber describer) {
        Spec g1 = new Spec();
        for (String m : first) g1.subs.put(m, subsOf.apply(m));
        return assignor(assignorName).assign(g1, describer).members();
    }

    static String oneCase(String assignorName, String id, String version, Random rnd) {
        int nTopics = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 8 : 3);
        List<String> names = new ArrayList<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        SubscribedTopicDescriber describer = topics(rnd, nTopics, names, ids, counts);
        Set<Uuid> topicSet = idsOf(names, ids);
        List<String> first = firstMembers(rnd, 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 30 : 10), new HashMap<>(),
                                          () -> topicSet);
        Map<String, MemberAssignment> a1 = firstRebalance(assignorName, first, m -> topicSet, describer);
        boolean history = rnd.nextInt(5) != 0;
        List<String> members = new ArrayList<>();
        if (history) {
            for (String m : first) if (rnd.nextInt(10) < 7) members.add(m);
            int joining = rnd.nextInt(rnd.nextInt(3) == 0 ? 12 : 4);
            for (int j = 0; j < joining; j++) members.add(new Uuid(rnd.nextLong(), rnd.nextLong()).toString());
            if (members.isEmpty()) members.add(first.get(0));
            if (rnd.nextInt(6) == 0)
                for (String t : names) counts.put(ids.get(t), counts.get(ids.get(t)) + rnd.nextInt(8));
        } else {
            members.addAll(first);
        }
        return secondRebalance(assignorName, id, version, rnd, describer, names, ids, counts, names, null,
                               members, m -> topicSet, false, history ? a1 : null);
    }

    // "empty": a group whose members held partitions after a first rebalance and now subscribe to
    // nothing (issue 48): the assignor has members but nothing to assign, and Kafka's answer is a
    // GroupAssignment without members, not every member with nothing.
    static String emptyCase(String assignorName, String id, String version, Random rnd) {
        int nTopics = 1 + rnd.nextInt(3);
        List<String> names = new ArrayList<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        SubscribedTopicDescriber describer = topics(rnd, nTopics, names, ids, counts);
        Set<Uuid> topicSet = idsOf(names, ids);
        List<String> members = firstMembers(rnd, 1 + rnd.nextInt(8), new HashMap<>(), () -> topicSet);
        Map<String, MemberAssignment> a1 = firstRebalance(assignorName, members, m -> topicSet, describer);
        Set<Uuid> none = Collections.emptySet();
        return secondRebalance(assignorName, id, version, rnd, describer, names, ids, counts, names, null,
                               members, m -> none, true, rnd.nextBoolean() ? a1 : null);
    }

    // The second rebalance: each member (in `members` order, put into the coordinator's map) with
    // its subscribed topic ids (`subsOf`, recorded as "topics" when `withTopics`), its first-round
    // assignment handed over (from `a1`, null: none) and, for a static family, its instance id;
    // then the case's JSON line ("topics": those of `live`; "vanished": those given, [] if none).
    static String secondRebalance(String assignorName, String id, String version, Random rnd,
                                  SubscribedTopicDescriber describer, List<String> names, Map<String, Uuid> ids,
                                  Map<Uuid, Integer> counts, List<String> live, String vanished, List<String> members,
                                  java.util.function.Function<String, Set<Uuid>> subsOf, boolean withTopics,
                                  Map<String, MemberAssignment> a1) {
        Spec g2 = new Spec();
        StringBuilder membersJson = new StringBuilder("[");
        for (int i = 0; i < members.size(); i++) {
            String m = members.get(i);
            Set<Uuid> mine = subsOf.apply(m);
            g2.subs.put(m, mine);
            String owned = a1 != null && a1.containsKey(m) ? handOver(g2, m, a1.get(m), names, ids) : "[]";
            String inst = instance(g2, m, rnd);
            if (i > 0) membersJson.append(',');
            membersJson.append("{\"id\":\"").append(m).append('"').append(inst);
            if (withTopics) membersJson.append(",\"topics\":").append(namesOf(mine, names, ids));
            membersJson.append(",\"owned\":").append(owned).append('}');
        }
        membersJson.append(']');
        String expected = expected(assignorName, g2, describer, members, names, ids);
        return "{\"id\":\"" + id + "\",\"assignor\":\"" + (assignorName.equals("range") ? "server-range" : "uniform")
            + "\",\"source\":{\"artifact\":\"org.apache.kafka:kafka-group-coordinator\",\"version\":\"" + version
            + "\"},\"topics\":" + topicsJson(live, ids, counts) + ",\"vanished\":" + (vanished == null ? "[]" : vanished)
            + ",\"members\":" + membersJson + ",\"expected\":" + expected + "}";
    }

    // The member's first-round assignment handed to the second as the coordinator does (an
    // unmodifiable map of topic id to an unmodifiable set), and its JSON: [[topic, [p, ...]], ...].
    static String handOver(Spec g2, String m, MemberAssignment a, List<String> names, Map<String, Uuid> ids) {
        StringBuilder owned = new StringBuilder("[");
        Map<Uuid, Set<Integer>> mine = new HashMap<>();
        boolean f = true;
        for (String t : names) {
            Set<Integer> s = a.partitions().get(ids.get(t));
            if (s == null || s.isEmpty()) continue;
            List<Integer> sorted = new ArrayList<>(s);
            Collections.sort(sorted);
            mine.put(ids.get(t), Collections.unmodifiableSet(new HashSet<>(sorted)));
            if (!f) owned.append(',');
            f = false;
            owned.append("[\"").append(t).append("\",").append(sorted.toString().replace(" ", "")).append(']');
        }
        g2.assigned.put(m, Collections.unmodifiableMap(mine));
        return owned.append(']').toString();
    }

    // Each member of the GroupAssignment (in the group's order) with its partitions per topic,
    // sorted, or the exception the assignor threw. A member the assignment leaves out is left
    // out here too (Kafka's empty GroupAssignment when nothing is assigned), so "absent" and
    // "present with nothing" ([]) stay apart.
    static String expected(String assignorName, Spec g2, SubscribedTopicDescriber describer, List<String> members,
                           List<String> names, Map<String, Uuid> ids) {
        StringBuilder expected = new StringBuilder("{");
        try {
            Map<String, MemberAssignment> a2 = assignor(assignorName).assign(g2, describer).members();
            boolean f = true;
            for (String m : members) {
                if (!a2.containsKey(m)) continue;
                if (!f) expected.append(',');
                f = false;
                expected.append('"').append(m).append("\":[");
                boolean f2 = true;
                MemberAssignment a = a2.get(m);
                for (String t : names) {
                    Set<Integer> s = a == null ? null : a.partitions().get(ids.get(t));
                    if (s == null || s.isEmpty()) continue;
                    List<Integer> sorted = new ArrayList<>(s);
                    Collections.sort(sorted);
                    if (!f2) expected.append(',');
                    f2 = false;
                    expected.append("[\"").append(t).append("\",").append(sorted.toString().replace(" ", "")).append(']');
                }
                expected.append(']');
            }
            return expected.append('}').toString();
        } catch (RuntimeException ex) {
            return "{\"error\":{\"type\":\"" + ex.getClass().getSimpleName() + "\"}}";
        }
    }

    static String topicsJson(List<String> names, Map<String, Uuid> ids, Map<Uuid, Integer> counts) {
        StringBuilder topicsJson = new StringBuilder("[");
        for (int i = 0; i < names.size(); i++) {
            Uuid u = ids.get(names.get(i));
            if (i > 0) topicsJson.append(',');
            topicsJson.append("[\"").append(names.get(i)).append("\",").append(counts.get(u))
                .append(",[").append(u.getMostSignificantBits()).append(',').append(u.getLeastSignificantBits()).append("]]");
        }
        return topicsJson.append(']').toString();
    }

    static Set<Uuid> subset(Random rnd, List<String> names, Map<String, Uuid> ids) {
        Set<Uuid> out = new HashSet<>();
        for (String t : names) if (rnd.nextInt(3) != 0) out.add(ids.get(t));
        if (out.isEmpty()) out.add(ids.get(names.get(rnd.nextInt(names.size()))));
        return out;
    }

    static String namesOf(Set<Uuid> topics, List<String> names, Map<String, Uuid> ids) {
        StringBuilder sb = new StringBuilder("[");
        for (String t : names) {
            if (!topics.contains(ids.get(t))) continue;
            if (sb.length() > 1) sb.append(',');
            sb.append('"').append(t).append('"');
        }
        return sb.append(']').toString();
    }

    // n distinct members of random ids, each subscribed to what `pick` draws (into subs), drawn
    // after its id.
    static List<String> firstMembers(Random rnd, int n, Map<String, Set<Uuid>> subs,
                                     java.util.function.Supplier<Set<Uuid>> pick) {
        List<String> first = new ArrayList<>();
        while (first.size() < n) {
            String m = new Uuid(rnd.nextLong(), rnd.nextLong()).toString();
            if (first.contains(m)) continue;
            first.add(m);
            subs.put(m, pick.get());
        }
        return first;
    }

    // Groups whose members subscribe to different topics (the heterogeneous builders): a first
    // rebalance, then members leave, join and change their subscriptions, and topics may grow; a
    // member's target assignment still holds the topics it left, as the coordinator's does.
    static String unequalCase(String assignorName, String id, String version, Random rnd) {
        int nTopics = 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 8 : 4);
        List<String> names = new ArrayList<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        SubscribedTopicDescriber describer = topics(rnd, nTopics, names, ids, counts);
        Set<Uuid> all = idsOf(names, ids);
        Map<String, Set<Uuid>> subs = new HashMap<>();
        List<String> first = firstMembers(rnd, 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 30 : 10), subs,
                                          () -> rnd.nextInt(8) == 0 ? all : subset(rnd, names, ids));
        Map<String, MemberAssignment> a1 = firstRebalance(assignorName, first, subs::get, describer);
        boolean history = rnd.nextInt(6) != 0;
        List<String> members = new ArrayList<>();
        if (history) {
            for (String m : first) {
                if (rnd.nextInt(10) >= 7) continue;
                members.add(m);
                if (rnd.nextInt(10) < 3) subs.put(m, subset(rnd, names, ids));
            }
            int joining = rnd.nextInt(rnd.nextInt(3) == 0 ? 12 : 4);
            for (int j = 0; j < joining; j++) {
                String m = new Uuid(rnd.nextLong(), rnd.nextLong()).toString();
                members.add(m);
                subs.put(m, subset(rnd, names, ids));
            }
            if (members.isEmpty()) members.add(first.get(0));
            if (rnd.nextInt(6) == 0)
                for (String t : names) counts.put(ids.get(t), counts.get(ids.get(t)) + rnd.nextInt(8));
        } else {
            members.addAll(first);
        }
        return secondRebalance(assignorName, id, version, rnd, describer, names, ids, counts, names, null,
                               members, subs::get, true, history ? a1 : null);
    }

    // Groups whose answer depends on the JVM (issue 33): HashSet copies of 12, 24 or 48 topic
    // ids (or partitions), which Java 17 sizes one doubling larger than Java 19 and later
    // (HashMap.calculateHashMapCapacity). Case 0 is the minimal one: topics t2 ... t12 and t17
    // with ids (0,2) ... (0,12) and (0,17), one partition each, members m0 and m1 holding nothing.
    static String jvmCase(String assignorName, String id, String version, Random rnd, int c) {
        List<String> names = new ArrayList<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        List<String> first = new ArrayList<>();
        boolean history;
        if (c == 0) {
            for (int i : new int[] {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17}) {
                String t = "t" + i;
                Uuid u = new Uuid(0L, i);
                names.add(t);
                ids.put(t, u);
                counts.put(u, 1);
            }
            first.add("m0");
            first.add("m1");
            history = false;
        } else {
            int[] sizes = {12, 24, 48, 11, 13, 25};
            int nTopics = sizes[rnd.nextInt(rnd.nextInt(3) == 0 ? sizes.length : 3)];
            boolean small = rnd.nextBoolean();             // ids of small hashes, as in case 0
            while (names.size() < nTopics) {
                String t = "t" + names.size();
                Uuid u = small ? new Uuid(0L, rnd.nextInt(256)) : new Uuid(rnd.nextLong(), rnd.nextLong());
                if (counts.containsKey(u)) continue;
                names.add(t);
                ids.put(t, u);
                counts.put(u, rnd.nextInt(4) == 0 ? 12 * (1 + rnd.nextInt(4)) : 1 + rnd.nextInt(3));
            }
            int n1 = 2 + rnd.nextInt(7);
            while (first.size() < n1) {
                String m = rnd.nextBoolean() ? "m" + rnd.nextInt(100) : new Uuid(rnd.nextLong(), rnd.nextLong()).toString();
                if (!first.contains(m)) first.add(m);
            }
            history = rnd.nextInt(3) != 0;
        }
        SubscribedTopicDescriber describer = describer(counts);
        Set<Uuid> topicSet = idsOf(names, ids);
        Map<String, MemberAssignment> a1 = firstRebalance(assignorName, first, m -> topicSet, describer);
        List<String> members = new ArrayList<>();
        if (history) {
            for (String m : first) if (rnd.nextInt(10) < 6) members.add(m);
            int joining = 1 + rnd.nextInt(3);
            for (int j = 0; j < joining; j++) members.add(new Uuid(rnd.nextLong(), rnd.nextLong()).toString());
        } else {
            members.addAll(first);
        }
        return secondRebalance(assignorName, id, version, rnd, describer, names, ids, counts, names, null,
                               members, m -> topicSet, false, history ? a1 : null);
    }

    // "vanish" (issue 33): topics that leave the metadata between the two rebalances while members
    // still hold their partitions in their target assignment. The coordinator resolves the
    // subscribed topic names through the metadata, so a vanished topic leaves every member's
    // subscribed topic ids (a fresh HashSet, filled in the topics' order) and the describer
    // (numPartitions -1), but stays, by its id, in the assignments; in one case in ten a member
    // still subscribes to one (a metadata image that lags). Half the groups have one subscription,
    // half several; half the topic ids have small hashes (crowded buckets), so the vanished ids
    // change the order of the members' assignment maps. Recorded as "vanished": [[name, [msb, lsb]]].
    static String vanishCase(String assignorName, String id, String version, Random rnd) {
        boolean homogeneous = rnd.nextBoolean();
        boolean small = rnd.nextBoolean();
        int nTopics = 2 + rnd.nextInt(rnd.nextInt(3) == 0 ? 24 : 6);
        List<String> names = new ArrayList<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        while (names.size() < nTopics) {
            Uuid u = small ? new Uuid(0L, rnd.nextInt(64)) : new Uuid(rnd.nextLong(), rnd.nextLong());
            if (counts.containsKey(u)) continue;
            String t = "topic-" + names.size();
            names.add(t);
            ids.put(t, u);
            counts.put(u, 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 16 : 3));
        }
        SubscribedTopicDescriber describer = describer(counts);
        Set<Uuid> all = idsOf(names, ids);
        Map<String, Set<Uuid>> subs = new HashMap<>();
        List<String> first = firstMembers(rnd, 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 20 : 8), subs,
                                          () -> homogeneous || rnd.nextInt(6) == 0 ? all : subset(rnd, names, ids));
        Map<String, MemberAssignment> a1 = firstRebalance(assignorName, first, subs::get, describer);
        // the topics that vanish: at least one, never all
        List<String> gone = new ArrayList<>();
        int nGone = 1 + rnd.nextInt(Math.min(nTopics - 1, rnd.nextInt(3) == 0 ? 8 : 2));
        while (gone.size() < nGone) {
            String t = names.get(rnd.nextInt(names.size()));
            if (!gone.contains(t)) gone.add(t);
        }
        for (String t : gone) counts.remove(ids.get(t));
        String lagging = rnd.nextInt(10) == 0 ? gone.get(0) : null;
        List<String> members = new ArrayList<>();
        for (String m : first) if (rnd.nextInt(10) < 8) members.add(m);
        int joining = rnd.nextInt(3);
        for (int j = 0; j < joining; j++) {
            String m = new Uuid(rnd.nextLong(), rnd.nextLong()).toString();
            members.add(m);
            subs.put(m, homogeneous ? all : subset(rnd, names, ids));
        }
        if (members.isEmpty()) members.add(first.get(0));
        String stale = lagging == null ? null : members.get(rnd.nextInt(members.size()));
        List<String> live = new ArrayList<>(names);
        live.removeAll(gone);
        StringBuilder vanished = new StringBuilder("[");
        for (String t : names) {
            if (!gone.contains(t)) continue;
            Uuid u = ids.get(t);
            if (vanished.length() > 1) vanished.append(',');
            vanished.append("[\"").append(t).append("\",[").append(u.getMostSignificantBits()).append(',')
                .append(u.getLeastSignificantBits()).append("]]");
        }
        vanished.append(']');
        return secondRebalance(assignorName, id, version, rnd, describer, names, ids, counts, live, vanished.toString(),
                               members, m -> {
                                   Set<Uuid> now = new HashSet<>();
                                   for (String t : names)
                                       if (subs.get(m).contains(ids.get(t))
                                               && (!gone.contains(t) || (t.equals(lagging) && (homogeneous || m.equals(stale)))))
                                           now.add(ids.get(t));
                                   return now;
                               }, !homogeneous || lagging != null, a1);
    }
}
