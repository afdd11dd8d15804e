package rocketlb;

import apache.rocketmq.v2.Message;
import apache.rocketmq.v2.Resource;
import apache.rocketmq.v2.SendMessageRequest;
import apache.rocketmq.v2.SystemProperties;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.proxy.common.ProxyContext;
import org.apache.rocketmq.proxy.processor.QueueSelector;
import org.apache.rocketmq.proxy.service.route.AddressableMessageQueue;
import org.apache.rocketmq.proxy.service.route.MessageQueueSelector;
import org.apache.rocketmq.proxy.service.route.MessageQueueView;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * Where a released Proxy stores a gRPC producer's message, group or none (issue 34):
 *
 *   ProxyGroupQueueVectors SEED CASES VERSION
 *
 * Builds a real org.apache.rocketmq.proxy.service.route.MessageQueueView (rocketmq-proxy VERSION, no fault strategy /
 * no penalizer: the Proxy's default sendLatencyEnable=false) from the case's TopicRouteData, sets its write
 * selector's queueIndex to the case's start (reflection: upstream seeds it from an unseeded Random), and asks the
 * real SendMessageActivity.SendMessageQueueSelector (protected, reached by reflection) for each send's queue on a
 * real protobuf SendMessageRequest. One JSON object a line on stdout; schema in rocketlb_core/vectorgen/proxy.py.
 */
public final class ProxyGroupQueueVectors {
    static final String[] NAMES = {"broker-a", "broker-b", "broker-c", "broker-d", "broker-e", "brøker-f",
        "broker-\uFF21", "broker-\uD83D\uDE80", "ブローカー"};
    static final String[] WORDS = {"é", "ü", "ß", "中", "日本", "Ω", "\uD83D\uDE00", "\uD83C\uDF55", "\uD800\uDC00",
        "\uFFFD", "\uFF21", "a", "Z", "-", "_", "0", "9", " "};
    static final String[] BLANKS = {" ", "\t", "\n", "\u2003", "\u3000", "\u001F", "\u2028", "\u000B"};
    static final String[] NOT_BLANK = {"\u00A0", "\u0085", "\u2007", "\u202F", "\u200B", "\uFEFF"};

    private ProxyGroupQueueVectors() {
    }

    static boolean hasLite() {
        for (Method m : SystemProperties.Builder.class.getMethods()) {
            if (m.getName().equals("setLiteTopic")) {
                return true;
            }
        }
        return false;
    }

    static String words(Random r, int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append(WORDS[r.nextInt(WORDS.length)]);
        }
        return s.toString();
    }

    static String ascii(Random r, int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append((char) (33 + r.nextInt(94)));
        }
        return s.toString();
    }

    /** A message group: empty, blank, ASCII, non-ASCII, non-BMP, long. */
    static String group(Random r) {
        switch (r.nextInt(14)) {
            case 0:
            case 1:
                return "";
            case 2:
                return BLANKS[r.nextInt(BLANKS.length)] + (r.nextBoolean() ? BLANKS[r.nextInt(BLANKS.length)] : "");
            case 3:
                return NOT_BLANK[r.nextInt(NOT_BLANK.length)] + (r.nextBoolean() ? " " : "");
            case 4:
            case 5:
                return "order-" + r.nextInt(100000);
            case 6:
                return ascii(r, 1 + r.nextInt(24));
            case 7:
            case 8:
                return "group-" + words(r, 1 + r.nextInt(6));
            case 9:
                return words(r, 1 + r.nextInt(3));
            case 10:
                return "\uD83D\uDE80-" + r.nextInt(1000);
            case 11:
                return ascii(r, 64 + r.nextInt(200)) + words(r, r.nextInt(40));
            default:
                return "GID_" + r.nextInt(40);
        }
    }

    static String liteTopic(Random r) {
        int k = r.nextInt(5);
        return k <= 1 ? "" : (k == 2 ? " " : "lite-" + words(r, 1 + r.nextInt(3)));
    }

    /** One case's inputs, drawn from r (the same draws on every release). */
    static JSONObject draw(Random r, boolean lite) {
        JSONObject c = new JSONObject(new LinkedHashMap<>());
        int n = 1 + r.nextInt(5);
        List<String> pool = new ArrayList<>(List.of(NAMES));
        Collections.shuffle(pool, r);
        JSONArray qds = new JSONArray();
        JSONArray masterless = new JSONArray();
        for (int i = 0; i < n; i++) {
            String b = pool.get(i);
            int copies = r.nextInt(12) == 0 ? 2 : 1;
            for (int k = 0; k < copies; k++) {
                int write = r.nextInt(8) == 0 ? 0 : (r.nextInt(4) == 0 ? 16 : 1 + r.nextInt(8));
                int perm = r.nextInt(3) == 0 ? r.nextInt(8) : 6;
                qds.add(JSONArray.of(b, write, perm));
            }
            if (r.nextInt(10) == 0) {
                masterless.add(b);
            }
        }
        Collections.shuffle(qds, r);
        c.put("topic", r.nextInt(4) == 0 ? "Topic-\u00e9" : "TopicTest");
        c.put("queue_datas", qds);
        c.put("masterless", masterless);
        c.put("index_start", r.nextInt());
        JSONArray sends = new JSONArray();
        int count = 1 + r.nextInt(4);
        for (int i = 0; i < count; i++) {
            JSONObject s = new JSONObject(new LinkedHashMap<>());
            s.put("group", group(r));
            String lt = liteTopic(r);
            s.put("lite_topic", lite ? lt : null);
            s.put("messages", r.nextInt(10) == 0 ? 2 : 1);
            sends.add(s);
        }
        c.put("sends", sends);
        return c;
    }

    static TopicRouteData route(JSONObject c) {
        TopicRouteData route = new TopicRouteData();
        List<QueueData> qds = new ArrayList<>();
        List<BrokerData> bds = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        JSONArray masterless = c.getJSONArray("masterless");
        for (Object o : c.getJSONArray("queue_datas")) {
            JSONArray q = (JSONArray) o;
            QueueData qd = new QueueData();
            qd.setBrokerName(q.getString(0));
            qd.setReadQueueNums(q.getIntValue(1));
            qd.setWriteQueueNums(q.getIntValue(1));
            qd.setPerm(q.getIntValue(2));
            qds.add(qd);
            if (!seen.contains(qd.getBrokerName())) {
                seen.add(qd.getBrokerName());
                HashMap<Long, String> addrs = new HashMap<>();
                if (!masterless.contains(qd.getBrokerName())) {
                    addrs.put(0L, "10.0.0." + seen.size() + ":10911");
                }
                addrs.put(1L, "10.0.1." + seen.size() + ":10911");
                bds.add(new BrokerData("DefaultCluster", qd.getBrokerName(), addrs));
            }
        }
        route.setQueueDatas(qds);
        route.setBrokerDatas(bds);
        return route;
    }

    static MessageQueueView view(String topic, TopicRouteData route) throws Exception {
        for (Constructor<?> k : MessageQueueView.class.getConstructors()) {
            // 5.3.3: (String, TopicRouteData, MQFaultStrategy); 5.5.0: (String, TopicRouteData, List<penalizer>)
            if (k.getParameterCount() == 3) {
                return (MessageQueueView) k.newInstance(topic, route, null);
            }
        }
        throw new IllegalStateException("no MessageQueueView(String, TopicRouteData, ...)");
    }

    static AtomicInteger queueIndex(MessageQueueSelector selector) throws Exception {
        Field f = MessageQueueSelector.class.getDeclaredField("queueIndex");
        f.setAccessible(true);
        return (AtomicInteger) f.get(selector);
    }

    static QueueSelector selector(SendMessageRequest request) throws Exception {
        Class<?> k = Class.forName(
            "org.apache.rocketmq.proxy.grpc.v2.producer.SendMessageActivity$SendMessageQueueSelector");
        Constructor<?> make = k.getDeclaredConstructor(SendMessageRequest.class);
        make.setAccessible(true);
        return (QueueSelector) make.newInstance(request);
    }

    static SendMessageRequest request(String topic, JSONObject s) throws Exception {
        SystemProperties.Builder props = SystemProperties.newBuilder().setMessageGroup(s.getString("group"));
        if (s.get("lite_topic") != null) {
            SystemProperties.Builder.class.getMethod("setLiteTopic", String.class)
                .invoke(props, s.getString("lite_topic"));
        }
        SendMessageRequest.Builder b = SendMessageRequest.newBuilder();
        for (int i = 0; i < s.getIntValue("messages"); i++) {
            b.addMessages(Message.newBuilder().setTopic(Resource.newBuilder().setName(topic))
                .setSystemProperties(props));
        }
        return b.build();
    }

    static JSONArray row(AddressableMessageQueue q) {
        return q == null ? null : JSONArray.of(q.getBrokerName(), q.getQueueId());
    }

    static void answer(JSONObject c) throws Exception {
        String topic = c.getString("topic");
        MessageQueueView view = view(topic, route(c));
        MessageQueueSelector write = view.getWriteSelector();
        JSONArray queues = new JSONArray();
        for (AddressableMessageQueue q : write.getQueues()) {
            queues.add(row(q));
        }
        c.put("write_queues", queues);
        AtomicInteger index = queueIndex(write);
        index.set(c.getIntValue("index_start"));
        for (Object o : c.getJSONArray("sends")) {
            JSONObject s = (JSONObject) o;
            AddressableMessageQueue q = selector(request(topic, s)).select(ProxyContext.create(), view);
            s.put("expect", row(q));
            s.put("index", index.get());
        }
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int cases = Integer.parseInt(args[1]);
        String version = args[2];
        boolean lite = hasLite();
        JSONObject source = Cases.source("rocketmq-proxy", version,
            "org.apache.rocketmq.proxy.grpc.v2.producer.SendMessageActivity$SendMessageQueueSelector#select", seed);
        source.put("lite_topic", lite);
        Random r = new Random(seed);
        // every non-ASCII character escaped: a group may hold U+2028 or U+0085, which Python's
        // str.splitlines (the driver's) would take for a line end
        Cases.print("proxy-group-queue", version, source, cases, (c, i) -> {
            c.putAll(draw(r, lite));
            answer(c);
        }, JSONWriter.Feature.WriteNulls, JSONWriter.Feature.EscapeNoneAscii);
    }
}
