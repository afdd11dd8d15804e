package rocketlb;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.common.ThreadLocalIndex;
import org.apache.rocketmq.client.impl.producer.TopicPublishInfo;
import org.apache.rocketmq.client.latency.MQFaultStrategy;
import org.apache.rocketmq.client.latency.Resolver;
import org.apache.rocketmq.client.latency.ServiceDetector;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Replays the 5.x producer scenarios of the conformance vectors (schema: the vectors' README) on a released
 * rocketmq-client jar: MQFaultStrategy (the production constructor, with a real ClientConfig),
 * TopicPublishInfo, ThreadLocalIndex and LatencyFaultToleranceImpl as released, the fault table's
 * System.currentTimeMillis() redirected to VClock (ClockRewrite.java), the counter's stored value and its
 * random draws set through reflection. Reads scenarios as JSON lines on stdin and prints, per scenario, one
 * JSON line {"id", "outs": [one output per step, null for report and advance], "final_index_stored"}.
 */
public final class ProducerReplay {
    /** A Random whose draws are given: reset() draws nextInt(Integer.MAX_VALUE). */
    static final class Scripted extends Random {
        Integer next;

        @Override
        public int nextInt(int bound) {
            if (next == null) {
                throw new IllegalStateException("an unscripted draw");
            }
            int v = next;
            next = null;
            return v;
        }

        @Override
        public int nextInt() {
            return nextInt(0);
        }
    }

    private static Field field(Class<?> c, String name) throws Exception {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    private static MessageQueue mq(JSONArray a) {
        return new MessageQueue(a.getString(0), a.getString(1), a.getIntValue(2));
    }

    private static long[] longs(JSONArray a) {
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getLongValue(i);
        }
        return out;
    }

    private static JSONArray asList(MessageQueue q) {
        JSONArray a = new JSONArray();
        a.add(q.getTopic());
        a.add(q.getBrokerName());
        a.add(q.getQueueId());
        return a;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        Field tlField = field(ThreadLocalIndex.class, "threadLocalIndex");
        Field randomField = field(ThreadLocalIndex.class, "random");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JSONObject sc = JSON.parseObject(line);
            VClock.set(sc.getLongValue("clock_start"));
            ClientConfig cc = new ClientConfig();
            cc.setSendLatencyEnable(sc.getBooleanValue("send_latency_fault_enable"));
            cc.setStartDetectorEnable(sc.getBooleanValue("start_detector_enable"));
            Map<String, String> resolve = new LinkedHashMap<>();
            Map<String, Boolean> detectOk = new LinkedHashMap<>();
            List<String> probed = new ArrayList<>();
            Resolver resolver = resolve::get;
            ServiceDetector detector = (endpoint, timeout) -> {
                probed.add(endpoint);
                return Boolean.TRUE.equals(detectOk.get(endpoint));
            };
            MQFaultStrategy strategy = new MQFaultStrategy(cc, resolver, detector);
            JSONArray lm = sc.getJSONArray("latency_max");
            if (lm != null) {
                strategy.setLatencyMax(longs(lm));
            }
            JSONArray nad = sc.getJSONArray("not_available_duration");
            if (nad != null) {
                strategy.setNotAvailableDuration(longs(nad));
            }
            TopicPublishInfo tp = new TopicPublishInfo();
            List<MessageQueue> queues = new ArrayList<>();
            for (Object q : sc.getJSONArray("message_queues")) {
                queues.add(mq((JSONArray) q));
            }
            tp.setMessageQueueList(queues);
            tp.setHaveTopicRouterInfo(true);
            ThreadLocalIndex index = new ThreadLocalIndex();
            Scripted draws = new Scripted();
            randomField.set(index, draws);
            @SuppressWarnings("unchecked")
            ThreadLocal<Integer> stored = (ThreadLocal<Integer>) tlField.get(index);
            stored.set(sc.getIntValue("index_start"));
            tp.setSendWhichQueue(index);
            String topic = sc.getString("topic");
            JSONArray outs = new JSONArray();
            for (Object o : sc.getJSONArray("steps")) {
                JSONObject step = (JSONObject) o;
                String op = step.getString("op");
                switch (op) {
                    case "select": {
                        boolean reset = step.getBooleanValue("reset_index");
                        if (step.containsKey("reset_value")) {
                            draws.next = step.getInteger("reset_value");
                        }
                        Object got;
                        try {
                            got = asList(strategy.selectOneMessageQueue(tp, step.getString("last"), reset));
                        } catch (RuntimeException e) {
                            JSONObject err = new JSONObject();
                            err.put("type", e.getClass().getSimpleName());
                            err.put("message", e.getMessage());
                            JSONObject wrap = new JSONObject();
                            wrap.put("error", err);
                            got = wrap;
                        }
                        if (draws.next != null) {
                            throw new IllegalStateException(sc.getString("id") + ": reset_value not drawn");
                        }
                        outs.add(got);
                        break;
                    }
                    case "report":
                        strategy.updateFaultItem(step.getString("broker"), step.getLongValue("latency"),
                            step.getBooleanValue("isolation"), step.getBooleanValue("reachable"));
                        outs.add(null);
                        break;
                    case "advance":
                        VClock.set(VClock.currentTimeMillis() + step.getLongValue("ms"));
                        outs.add(null);
                        break;
                    case "probe": {
                        JSONObject available = new JSONObject();
                        JSONObject reachable = new JSONObject();
                        for (Object b : step.getJSONArray("brokers")) {
                            MessageQueue probe = new MessageQueue(topic, (String) b, 0);
                            available.put((String) b, strategy.getAvailableFilter().filter(probe));
                            reachable.put((String) b, strategy.getReachableFilter().filter(probe));
                        }
                        JSONObject got = new JSONObject();
                        got.put("available", available);
                        got.put("reachable", reachable);
                        got.put("index_stored", stored.get());
                        JSONArray list = new JSONArray();
                        for (MessageQueue q : tp.getMessageQueueList()) {
                            list.add(asList(q));
                        }
                        got.put("queue_list", list);
                        outs.add(got);
                        break;
                    }
                    case "detect": {
                        resolve.clear();
                        detectOk.clear();
                        JSONObject r = step.getJSONObject("resolve");
                        for (String k : r.keySet()) {
                            resolve.put(k, r.getString(k));
                        }
                        JSONObject ok = step.getJSONObject("detect_ok");
                        for (String k : ok.keySet()) {
                            detectOk.put(k, ok.getBoolean(k));
                        }
                        probed.clear();
                        Field tolerance = field(MQFaultStrategy.class, "latencyFaultTolerance");
                        Object lft = tolerance.get(strategy);
                        lft.getClass().getMethod("detectByOneRound").invoke(lft);
                        JSONObject got = new JSONObject();
                        List<String> sorted = new ArrayList<>(probed);
                        Collections.sort(sorted);
                        got.put("probed_endpoints_sorted", sorted);
                        outs.add(got);
                        break;
                    }
                    default:
                        throw new IllegalArgumentException("unknown op " + op);
                }
            }
            JSONObject result = new JSONObject();
            result.put("id", sc.getString("id"));
            result.put("outs", outs);
            result.put("final_index_stored", stored.get());
            out.println(JSON.toJSONString(result, com.alibaba.fastjson2.JSONWriter.Feature.WriteNulls));
        }
        out.flush();
    }
}
