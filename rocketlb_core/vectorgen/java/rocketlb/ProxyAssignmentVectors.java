package rocketlb;

import apache.rocketmq.v2.Address;
import apache.rocketmq.v2.AddressScheme;
import apache.rocketmq.v2.Assignment;
import apache.rocketmq.v2.Endpoints;
import apache.rocketmq.v2.QueryAssignmentRequest;
import apache.rocketmq.v2.QueryAssignmentResponse;
import apache.rocketmq.v2.Resource;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.io.File;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.apache.rocketmq.common.filter.ExpressionType;
import org.apache.rocketmq.proxy.common.ProxyContext;
import org.apache.rocketmq.proxy.config.Configuration;
import org.apache.rocketmq.proxy.config.ConfigurationManager;
import org.apache.rocketmq.proxy.grpc.v2.route.RouteActivity;
import org.apache.rocketmq.proxy.processor.MessagingProcessor;
import org.apache.rocketmq.proxy.service.route.ProxyTopicRouteData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

/**
 * What a released Proxy answers a gRPC push consumer's QueryAssignment (issue 34, item 2):
 *
 *   ProxyAssignmentVectors SEED CASES VERSION
 *
 * Runs the real org.apache.rocketmq.proxy.grpc.v2.route.RouteActivity#queryAssignment (rocketmq-proxy VERSION) on
 * real protobuf requests. Its MessagingProcessor is a java.lang.reflect.Proxy whose getTopicRouteDataForProxy and
 * getSubscriptionGroupConfig answer the case's data (a real ProxyTopicRouteData and SubscriptionGroupConfig); any
 * other call fails the run. The Proxy's configuration is its own, read from an empty JSON file. One JSON object a
 * line on stdout; schema in rocketlb_core/vectorgen/proxy.py.
 */
public final class ProxyAssignmentVectors {
    static final String[] NAMES = {"broker-a", "broker-b", "broker-c", "broker-d", "broker-e", "broker-f",
        "brøker-g", "broker-\uD83D\uDE80"};
    static final String[] SCHEMES = {"IPv4", "IPv4", "IPv4", "IPv4", "IPv6", "DOMAIN_NAME"};

    private ProxyAssignmentVectors() {
    }

    static boolean hasLite() {
        for (Method m : SubscriptionGroupConfig.class.getMethods()) {
            if (m.getName().equals("setLiteBindTopic")) {
                return true;
            }
        }
        return false;
    }

    static String host(Random r, String scheme) {
        switch (scheme) {
            case "IPv6":
                return "fd00::" + Integer.toHexString(1 + r.nextInt(200));
            case "DOMAIN_NAME":
                return "proxy-" + r.nextInt(5) + ".rocketmq.example";
            default:
                return "10.0." + r.nextInt(3) + "." + (1 + r.nextInt(250));
        }
    }

    /** One case's inputs, drawn from r. */
    static JSONObject draw(Random r, int index, boolean lite) {
        JSONObject c = new JSONObject();
        int n = 1 + r.nextInt(5);
        List<String> names = new ArrayList<>();
        List<String> pool = new ArrayList<>(List.of(NAMES));
        Collections.shuffle(pool, r);
        for (int i = 0; i < n; i++) {
            names.add(pool.get(i));
        }
        // queue datas in the route's order; now and then a second one for the same broker
        JSONArray qds = new JSONArray();
        for (String b : names) {
            int copies = r.nextInt(12) == 0 ? 2 : 1;
            for (int k = 0; k < copies; k++) {
                int read = r.nextInt(10) == 0 ? 16 : r.nextInt(9);
                int write = r.nextInt(9);
                int perm = r.nextInt(3) == 0 ? 6 : r.nextInt(8);
                qds.add(JSONArray.of(b, read, write, perm));
            }
        }
        Collections.shuffle(qds, r);
        // broker datas: some missing, some without a master, some twice, some not in the queue datas
        JSONArray bds = new JSONArray();
        List<String> bnames = new ArrayList<>(names);
        if (r.nextInt(6) == 0) {
            bnames.add(pool.get(n));
        }
        for (String b : bnames) {
            if (r.nextInt(8) == 0) {
                continue;
            }
            int copies = r.nextInt(15) == 0 ? 2 : 1;
            for (int k = 0; k < copies; k++) {
                JSONObject addrs = new JSONObject(new LinkedHashMap<>());
                List<Long> ids = new ArrayList<>();
                if (r.nextInt(14) != 0) {
                    ids.add(0L);
                }
                int slaves = r.nextInt(3);
                for (int s = 1; s <= slaves; s++) {
                    ids.add(r.nextInt(80) == 0 ? 4294967296L + s : (long) s);
                }
                for (long id : ids) {
                    JSONArray list = new JSONArray();
                    int na = r.nextInt(10) == 0 ? 0 : (r.nextInt(5) == 0 ? 2 : 1);
                    for (int a = 0; a < na; a++) {
                        String scheme = SCHEMES[r.nextInt(SCHEMES.length)];
                        int port = r.nextBoolean() ? 8081 : 10911 + r.nextInt(4);
                        list.add(JSONArray.of(scheme, host(r, scheme), port));
                    }
                    addrs.put(Long.toString(id), list);
                }
                bds.add(JSONArray.of(b, addrs));
            }
        }
        Collections.shuffle(bds, r);
        JSONObject group = null;
        if (r.nextInt(8) != 0) {
            group = new JSONObject();
            group.put("consume_message_orderly", r.nextBoolean());
            int l = r.nextInt(3);          // drawn on every release, so both files hold the same requests
            int liteTopic = r.nextInt(100);
            if (lite) {
                group.put("lite_bind_topic", l == 0 ? null : (l == 1 ? "" : "lite-" + liteTopic));
            }
        }
        c.put("topic", r.nextInt(4) == 0 ? "Topic-" + index % 7 : "TopicTest");
        c.put("group", "GID_push_" + r.nextInt(10));
        c.put("group_config", group);
        c.put("queue_datas", qds);
        c.put("broker_datas", bds);
        return c;
    }

    static ProxyTopicRouteData route(JSONObject c) {
        ProxyTopicRouteData route = new ProxyTopicRouteData();
        List<QueueData> qds = new ArrayList<>();
        for (Object o : c.getJSONArray("queue_datas")) {
            JSONArray q = (JSONArray) o;
            QueueData qd = new QueueData();
            qd.setBrokerName(q.getString(0));
            qd.setReadQueueNums(q.getIntValue(1));
            qd.setWriteQueueNums(q.getIntValue(2));
            qd.setPerm(q.getIntValue(3));
            qds.add(qd);
        }
        route.setQueueDatas(qds);
        List<ProxyTopicRouteData.ProxyBrokerData> bds = new ArrayList<>();
        for (Object o : c.getJSONArray("broker_datas")) {
            JSONArray b = (JSONArray) o;
            ProxyTopicRouteData.ProxyBrokerData bd = new ProxyTopicRouteData.ProxyBrokerData();
            bd.setCluster("DefaultCluster");
            bd.setBrokerName(b.getString(0));
            JSONObject addrs = b.getJSONObject(1);
            for (String id : addrs.keySet()) {
                List<org.apache.rocketmq.proxy.common.Address> list = new ArrayList<>();
                for (Object a : addrs.getJSONArray(id)) {
                    JSONArray x = (JSONArray) a;
                    list.add(new org.apache.rocketmq.proxy.common.Address(
                        org.apache.rocketmq.proxy.common.Address.AddressScheme.valueOf(x.getString(0)),
                        com.google.common.net.HostAndPort.fromParts(x.getString(1), x.getIntValue(2))));
                }
                bd.getBrokerAddrs().put(Long.parseLong(id), list);
            }
            bds.add(bd);
        }
        route.setBrokerDatas(bds);
        return route;
    }

    static SubscriptionGroupConfig groupConfig(JSONObject c) throws Exception {
        JSONObject g = c.getJSONObject("group_config");
        if (g == null) {
            return null;
        }
        SubscriptionGroupConfig config = new SubscriptionGroupConfig();
        config.setGroupName(c.getString("group"));
        config.setConsumeMessageOrderly(g.getBooleanValue("consume_message_orderly"));
        if (g.containsKey("lite_bind_topic")) {
            SubscriptionGroupConfig.class.getMethod("setLiteBindTopic", String.class)
                .invoke(config, g.getString("lite_bind_topic"));
        }
        return config;
    }

    static MessagingProcessor processor(ProxyTopicRouteData route, SubscriptionGroupConfig config) {
        return (MessagingProcessor) java.lang.reflect.Proxy.newProxyInstance(
            MessagingProcessor.class.getClassLoader(), new Class<?>[] {MessagingProcessor.class},
            (self, method, args) -> {
                switch (method.getName()) {
                    case "getTopicRouteDataForProxy":
                        return route;
                    case "getSubscriptionGroupConfig":
                        return config;
                    default:
                        throw new IllegalStateException("unexpected call " + method);
                }
            });
    }

    static String endpoints(Endpoints e) {
        StringBuilder s = new StringBuilder(e.getScheme().name()).append(':');
        for (int i = 0; i < e.getAddressesCount(); i++) {
            Address a = e.getAddresses(i);
            s.append(i == 0 ? "" : ",").append(a.getHost()).append(':').append(a.getPort());
        }
        return s.toString();
    }

    static JSONObject answer(JSONObject c) throws Exception {
        RouteActivity activity = new RouteActivity(processor(route(c), groupConfig(c)), null, null);
        QueryAssignmentRequest request = QueryAssignmentRequest.newBuilder()
            .setTopic(Resource.newBuilder().setName(c.getString("topic")))
            .setGroup(Resource.newBuilder().setName(c.getString("group")))
            .setEndpoints(Endpoints.newBuilder().setScheme(AddressScheme.IPv4)
                .addAddresses(Address.newBuilder().setHost("127.0.0.1").setPort(8081)))
            .build();
        JSONObject out = new JSONObject();
        QueryAssignmentResponse response;
        try {
            response = activity.queryAssignment(ProxyContext.create(), request).get();
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            JSONObject err = new JSONObject();
            err.put("type", t.getClass().getSimpleName());
            err.put("message", t instanceof NullPointerException ? null : t.getMessage());
            out.put("error", err);
            return out;
        }
        out.put("code", response.getStatus().getCode().name());
        out.put("message", response.getStatus().getMessage());
        JSONArray rows = new JSONArray();
        for (Assignment a : response.getAssignmentsList()) {
            apache.rocketmq.v2.MessageQueue q = a.getMessageQueue();
            rows.add(JSONArray.of(q.getTopic().getName(), q.getBroker().getName(), q.getBroker().getId(),
                endpoints(q.getBroker().getEndpoints()), q.getId(), q.getPermission().name()));
        }
        out.put("assignments", rows);
        return out;
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int cases = Integer.parseInt(args[1]);
        String version = args[2];
        File config = File.createTempFile("rmq-proxy", ".json");
        config.deleteOnExit();
        Files.writeString(config.toPath(), "{}");
        System.setProperty(Configuration.CONFIG_PATH_PROPERTY, config.getPath());
        ConfigurationManager.initEnv();
        Method init;                       // 5.3.3 spells it intConfig, 5.5.0 initConfig
        try {
            init = ConfigurationManager.class.getMethod("initConfig");
        } catch (NoSuchMethodException e) {
            init = ConfigurationManager.class.getMethod("intConfig");
        }
        init.invoke(null);
        boolean lite = hasLite();
        JSONObject source = Cases.source("rocketmq-proxy", version,
            RouteActivity.class.getName() + "#queryAssignment", seed);
        source.put("lite_bind_topic", lite);
        Random r = new Random(seed);
        Cases.print("proxy-assignment", version, source, cases, (c, i) -> {
            c.putAll(draw(r, i, lite));
            c.put("expect", answer(c));
        }, JSONWriter.Feature.WriteNulls);
    }
}
