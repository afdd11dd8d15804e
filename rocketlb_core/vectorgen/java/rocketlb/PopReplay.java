package rocketlb;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.broker.processor.QueryAssignmentProcessor;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.consistenthash.HashFunction;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Replays the POP allocation vectors (allocation-pop.jsonl: groups of cases, schema in the vectors' README) on a
 * released broker's QueryAssignmentProcessor.allocate4Pop, the instance made without its constructor (allocate4Pop
 * reads no field). Prints per group {"id", "cases": [...], "view": [...]}: each a result list or an error.
 */
public final class PopReplay {
    private PopReplay() {
    }

    static List<MessageQueue> mqs(JSONArray a) {
        if (a == null) {
            return null;
        }
        List<MessageQueue> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            JSONArray q = a.getJSONArray(i);
            out.add(new MessageQueue(q.getString(0), q.getString(1), q.getIntValue(2)));
        }
        return out;
    }

    static List<String> strings(JSONArray a) {
        if (a == null) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            out.add(a.getString(i));
        }
        return out;
    }

    static AllocateMessageQueueStrategy strategy(JSONObject inner) {
        String name = inner.getString("strategy");
        JSONObject p = inner.getJSONObject("params");
        switch (name) {
            case "AVG":
                return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE":
                return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH": {
                Integer n = p == null ? null : p.getInteger("virtual_node_cnt");
                String hash = p == null ? null : p.getString("hash");
                if ("java_string_hashcode".equals(hash)) {
                    HashFunction f = key -> (long) key.hashCode();
                    return new AllocateMessageQueueConsistentHash(n == null ? 10 : n, f);
                }
                return n == null ? new AllocateMessageQueueConsistentHash() : new AllocateMessageQueueConsistentHash(n);
            }
            default:
                throw new IllegalArgumentException(name);
        }
    }

    static Object run(QueryAssignmentProcessor proc, AllocateMessageQueueStrategy s, String group, String cid,
                      List<MessageQueue> mqAll, List<String> cidAll, int share) {
        try {
            List<MessageQueue> r = proc.allocate4Pop(s, group, cid, mqAll, cidAll, share);
            if (r == null) {
                return null;
            }
            JSONArray a = new JSONArray();
            for (MessageQueue q : r) {
                a.add(JSONArray.of(q.getTopic(), q.getBrokerName(), q.getQueueId()));
            }
            return a;
        } catch (RuntimeException e) {
            JSONObject err = new JSONObject();
            err.put("type", e.getClass().getSimpleName());
            err.put("message", e.getMessage());
            return JSONObject.of("error", err);
        }
    }

    public static void main(String[] args) throws Exception {
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        QueryAssignmentProcessor proc = (QueryAssignmentProcessor) unsafe.getClass()
            .getMethod("allocateInstance", Class.class).invoke(unsafe, QueryAssignmentProcessor.class);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JSONObject g = JSON.parseObject(line);
            JSONObject params = g.getJSONObject("params");
            int share = params.getIntValue("pop_share_queue_num");
            String group = g.getString("consumer_group");
            JSONObject result = new JSONObject();
            result.put("id", g.getString("id"));
            for (String part : new String[] {"cases", "view"}) {
                JSONObject src = "cases".equals(part) ? g : g.getJSONObject("rebalance_view");
                JSONArray outs = new JSONArray();
                if (src != null) {
                    for (Object o : src.getJSONArray("cases")) {
                        JSONObject c = (JSONObject) o;
                        AllocateMessageQueueStrategy s;
                        try {
                            s = strategy(params.getJSONObject("inner"));
                        } catch (RuntimeException e) {
                            outs.add(JSONObject.of("error", JSONObject.of("type", e.getClass().getSimpleName())));
                            continue;
                        }
                        outs.add(run(proc, s, group, c.getString("current_cid"), mqs(src.getJSONArray("mq_all")),
                            strings(src.getJSONArray("cid_all")), share));
                    }
                }
                result.put(part, outs);
            }
            out.println(JSON.toJSONString(result, JSONWriter.Feature.WriteNulls));
        }
        out.flush();
    }
}
