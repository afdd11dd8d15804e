package rocketlb;

import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.client.ConsumerGroupInfo;
import org.apache.rocketmq.broker.client.ConsumerManager;
import org.apache.rocketmq.broker.loadbalance.MessageRequestModeManager;
import org.apache.rocketmq.broker.processor.QueryAssignmentProcessor;
import org.apache.rocketmq.broker.topic.TopicRouteInfoManager;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageQueueAssignment;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.body.QueryAssignmentRequestBody;
import org.apache.rocketmq.remoting.protocol.body.QueryAssignmentResponseBody;
import org.apache.rocketmq.remoting.protocol.body.SetMessageRequestModeRequestBody;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumeType;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * What a released broker answers a remoting consumer's QUERY_ASSIGNMENT (issue 34, item 2):
 *
 *   BrokerAssignmentVectors SEED CASES VERSION
 *
 * Runs the real QueryAssignmentProcessor (rocketmq-broker VERSION, through its constructor: its strategies, its
 * MessageRequestModeManager loaded from an empty store folder) on real request commands through processRequest,
 * decoding the real response body. The BrokerController is made without its constructor, holding a real BrokerConfig
 * and MessageStoreConfig and two answers that are the case's data: the broker's route cache
 * (TopicRouteInfoManager.getTopicSubscribeInfo, a subclass returning the case's queue set or null) and its consumer
 * list (ConsumerManager.getConsumerGroupInfo, a ConsumerGroupInfo whose getAllClientId is the case's list, or null).
 * A stored message request mode goes through the real MessageRequestModeManager.setMessageRequestMode. One JSON
 * object a line; schema in rocketlb_core/vectorgen/proxy.py.
 */
public final class BrokerAssignmentVectors {
    static final String[] BROKERS = {"broker-a", "broker-b", "broker-c", "brøker-d"};
    static final String[] STRATEGIES = {"AVG", "AVG", "AVG", "AVG", "AVG", "AVG", "AVG", "AVG_BY_CIRCLE",
        "AVG_BY_CIRCLE", "AVG_BY_CIRCLE", "AVG_BY_CIRCLE", "AVG_BY_CIRCLE", "AVG_BY_CIRCLE", "AVG_BY_CIRCLE",
        "CONSISTENT_HASH", "MACHINE_ROOM"};

    private BrokerAssignmentVectors() {
    }

    static void set(Object target, Class<?> owner, String field, Object value) throws Exception {
        Field f = owner.getDeclaredField(field);
        f.setAccessible(true);
        f.set(target, value);
    }

    static Object get(Object target, Class<?> owner, String field) throws Exception {
        Field f = owner.getDeclaredField(field);
        f.setAccessible(true);
        return f.get(target);
    }

    static String cid(Random r) {
        return "10.0.0." + (1 + r.nextInt(9)) + "@" + (100 + r.nextInt(5));
    }

    static JSONObject draw(Random r) {
        JSONObject c = new JSONObject();
        int kind = r.nextInt(16);
        String topic = kind == 0 ? "%RETRY%GID_pop" : (kind == 1 ? "%LMQ%lmq-" + r.nextInt(9) : "TopicTest");
        c.put("topic", topic);
        c.put("group", "GID_pop");
        JSONArray cids = null;
        String client = cid(r);
        if (r.nextInt(14) != 0) {
            cids = new JSONArray();
            int n = r.nextInt(7);
            for (int i = 0; i < n; i++) {
                cids.add(cid(r));
            }
            if (r.nextInt(6) != 0) {
                cids.add(r.nextInt(cids.size() + 1), client);
            }
        }
        if (r.nextInt(40) == 0) {
            client = "";
        }
        c.put("client_id", client);
        c.put("message_model", r.nextInt(10) == 0 ? "BROADCASTING" : "CLUSTERING");
        c.put("strategy", STRATEGIES[r.nextInt(STRATEGIES.length)]);
        JSONArray mqs = null;
        if (r.nextInt(14) != 0) {
            mqs = new JSONArray();
            int brokers = r.nextInt(12) == 0 ? 0 : 1 + r.nextInt(3);
            for (int b = 0; b < brokers; b++) {
                int queues = r.nextInt(10) == 0 ? 0 : 1 + r.nextInt(8);
                for (int q = 0; q < queues; q++) {
                    mqs.add(JSONArray.of(topic, BROKERS[b], q));
                }
            }
            Collections.shuffle(mqs, r);
        }
        c.put("mq_set", mqs);
        c.put("consumer_ids", cids);
        JSONObject stored = null;
        if (!topic.startsWith("%RETRY%") && r.nextInt(3) != 0) {   // the broker refuses to store one for a retry topic
            stored = new JSONObject();
            stored.put("mode", r.nextInt(3) == 0 ? "PULL" : "POP");
            stored.put("pop_share_queue_num", r.nextInt(7) - 1);
        }
        c.put("stored_mode", stored);
        JSONObject config = new JSONObject();
        config.put("broker_name", BROKERS[r.nextInt(BROKERS.length)]);
        config.put("default_message_request_mode", r.nextInt(3) == 0 ? "POP" : "PULL");
        config.put("default_pop_share_queue_num", r.nextInt(3) == 0 ? -1 : r.nextInt(6) - 1);
        config.put("server_load_balancer_enable", r.nextInt(12) != 0);
        c.put("broker_config", config);
        return c;
    }

    static Set<MessageQueue> mqSet(JSONArray a) {
        if (a == null) {
            return null;
        }
        Set<MessageQueue> out = new HashSet<>();
        for (Object o : a) {
            JSONArray q = (JSONArray) o;
            out.add(new MessageQueue(q.getString(0), q.getString(1), q.getIntValue(2)));
        }
        return out;
    }

    static JSONObject answer(JSONObject c, Path store, Object unsafe) throws Exception {
        JSONObject bc = c.getJSONObject("broker_config");
        BrokerConfig brokerConfig = new BrokerConfig();
        brokerConfig.setBrokerName(bc.getString("broker_name"));
        brokerConfig.setDefaultMessageRequestMode(bc.getString("default_message_request_mode"));
        brokerConfig.setDefaultPopShareQueueNum(bc.getIntValue("default_pop_share_queue_num"));
        brokerConfig.setServerLoadBalancerEnable(bc.getBooleanValue("server_load_balancer_enable"));
        MessageStoreConfig storeConfig = new MessageStoreConfig();
        storeConfig.setStorePathRootDir(store.toString());
        BrokerController controller = (BrokerController) unsafe.getClass().getMethod("allocateInstance", Class.class)
            .invoke(unsafe, BrokerController.class);
        set(controller, BrokerController.class, "brokerConfig", brokerConfig);
        set(controller, BrokerController.class, "messageStoreConfig", storeConfig);
        Set<MessageQueue> route = mqSet(c.getJSONArray("mq_set"));
        set(controller, BrokerController.class, "topicRouteInfoManager", new TopicRouteInfoManager(controller) {
            @Override
            public Set<MessageQueue> getTopicSubscribeInfo(String topic) {
                return route == null ? null : new HashSet<>(route);
            }
        });
        JSONArray ids = c.getJSONArray("consumer_ids");
        String group = c.getString("group");
        set(controller, BrokerController.class, "consumerManager", new ConsumerManager(null, 120000L) {
            @Override
            public ConsumerGroupInfo getConsumerGroupInfo(String g) {
                if (ids == null || !g.equals(group)) {
                    return null;
                }
                return new ConsumerGroupInfo(g, ConsumeType.CONSUME_POP, MessageModel.CLUSTERING, null) {
                    @Override
                    public List<String> getAllClientId() {
                        List<String> out = new ArrayList<>();
                        for (Object o : ids) {
                            out.add((String) o);
                        }
                        return out;
                    }
                };
            }
        });
        QueryAssignmentProcessor processor = new QueryAssignmentProcessor(controller);
        JSONObject stored = c.getJSONObject("stored_mode");
        if (stored != null) {
            SetMessageRequestModeRequestBody body = new SetMessageRequestModeRequestBody();
            body.setTopic(c.getString("topic"));
            body.setConsumerGroup(group);
            body.setMode(MessageRequestMode.valueOf(stored.getString("mode")));
            body.setPopShareQueueNum(stored.getIntValue("pop_share_queue_num"));
            MessageRequestModeManager modes = (MessageRequestModeManager) get(processor,
                QueryAssignmentProcessor.class, "messageRequestModeManager");
            modes.setMessageRequestMode(c.getString("topic"), group, body);
        }
        QueryAssignmentRequestBody body = new QueryAssignmentRequestBody();
        body.setTopic(c.getString("topic"));
        body.setConsumerGroup(group);
        body.setClientId(c.getString("client_id"));
        body.setStrategyName(c.getString("strategy"));
        body.setMessageModel(MessageModel.valueOf(c.getString("message_model")));
        RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.QUERY_ASSIGNMENT, null);
        request.setBody(body.encode());
        RemotingCommand response = processor.processRequest(null, request);
        QueryAssignmentResponseBody decoded = QueryAssignmentResponseBody.decode(response.getBody(),
            QueryAssignmentResponseBody.class);
        JSONObject out = new JSONObject();
        out.put("code", response.getCode());
        Set<MessageQueueAssignment> got = decoded.getMessageQueueAssignments();
        if (got == null) {
            out.put("assignments", null);
            return out;
        }
        List<JSONArray> rows = new ArrayList<>();
        for (MessageQueueAssignment a : got) {
            MessageQueue q = a.getMessageQueue();
            rows.add(JSONArray.of(q.getTopic(), q.getBrokerName(), q.getQueueId(),
                a.getMode() == null ? null : a.getMode().name()));
        }
        rows.sort((x, y) -> {
            int k = x.getString(1).compareTo(y.getString(1));
            return k != 0 ? k : Integer.compare(x.getIntValue(2), y.getIntValue(2));
        });
        out.put("assignments", new JSONArray(rows));
        return out;
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int cases = Integer.parseInt(args[1]);
        String version = args[2];
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Path store = Files.createTempDirectory("rocketlb-broker-store");
        JSONObject source = Cases.source("rocketmq-broker", version,
            QueryAssignmentProcessor.class.getName() + "#processRequest", seed);
        Random r = new Random(seed);
        Cases.print("broker-assignment", version, source, cases, (c, i) -> {
            c.putAll(draw(r));
            c.put("expect", answer(c, store, unsafe));
        }, JSONWriter.Feature.WriteNulls);
    }
}
