package org.apache.rocketmq.client.java.impl.producer;

import apache.rocketmq.v2.Address;
import apache.rocketmq.v2.AddressScheme;
import apache.rocketmq.v2.Code;
import apache.rocketmq.v2.HeartbeatRequest;
import apache.rocketmq.v2.HeartbeatResponse;
import apache.rocketmq.v2.MessageType;
import apache.rocketmq.v2.Permission;
import apache.rocketmq.v2.Resource;
import apache.rocketmq.v2.SendMessageRequest;
import apache.rocketmq.v2.SendMessageResponse;
import apache.rocketmq.v2.SendResultEntry;
import apache.rocketmq.v2.Status;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.java.exception.TooManyRequestsException;
import org.apache.rocketmq.client.java.impl.ClientImpl;
import org.apache.rocketmq.client.java.impl.ClientManager;
import org.apache.rocketmq.client.java.impl.consumer.SubscriptionLoadBalancer;
import org.apache.rocketmq.client.java.message.MessageBuilderImpl;
import org.apache.rocketmq.client.java.message.PublishingMessageImpl;
import org.apache.rocketmq.client.java.route.Endpoints;
import org.apache.rocketmq.client.java.route.MessageQueueImpl;
import org.apache.rocketmq.client.java.route.TopicRouteData;
import org.apache.rocketmq.client.java.rpc.Context;
import org.apache.rocketmq.client.java.rpc.RpcFuture;
import org.apache.rocketmq.shaded.com.google.common.hash.Hashing;
import org.apache.rocketmq.shaded.com.google.common.math.LongMath;
import org.apache.rocketmq.shaded.com.google.common.util.concurrent.Futures;
import org.apache.rocketmq.shaded.com.google.common.util.concurrent.SettableFuture;
import org.apache.rocketmq.shaded.com.google.gson.Gson;
import org.apache.rocketmq.shaded.com.google.gson.GsonBuilder;
import org.apache.rocketmq.shaded.com.google.gson.JsonArray;
import org.apache.rocketmq.shaded.com.google.gson.JsonNull;
import org.apache.rocketmq.shaded.com.google.gson.JsonObject;
import org.apache.rocketmq.shaded.io.grpc.Metadata;
import org.apache.rocketmq.shaded.io.grpc.stub.StreamObserver;

/**
 * Vectors of the gRPC client's balancing from rocketmq-client-java's own classes (issue 34):
 *
 *   GrpcVectors FAMILY SEED CASES VERSION
 *
 * FAMILY: siphash (Guava's Hashing.sipHash24() as shaded in the jar, LongMath.mod), publishing
 * (PublishingLoadBalancer: takeMessageQueues, takeMessageQueueByMessageGroup, update), subscription
 * (SubscriptionLoadBalancer: takeMessageQueue, update), send (ProducerImpl: the private send0 retry loop and
 * takeMessageQueues, ClientImpl.doHeartbeat; the client manager answers each attempt as the case scripts it).
 * One JSON object a line on stdout. In this package to reach the balancers' package-private update and the
 * producer's package-private constructor; private members through reflection.
 */
public final class GrpcVectors {
    static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();
    static final String[] NAMES = {"broker-a", "broker-b", "broker-c", "broker-d", "broker-e", "broker-f",
        "broker-g", "brøker-h", "broker-\uD83D\uDE80"};
    static final Permission[] PERMS = {Permission.READ_WRITE, Permission.READ_WRITE, Permission.READ_WRITE,
        Permission.READ_WRITE, Permission.READ, Permission.WRITE, Permission.NONE};

    private GrpcVectors() {
    }

    /** One route queue: topic, broker, broker id, endpoints ("host:port"), queue id, permission. */
    record Q(String topic, String broker, int brokerId, String endpoints, int queueId, Permission perm) {
        apache.rocketmq.v2.MessageQueue proto() {
            String[] hp = endpoints.split(":");
            apache.rocketmq.v2.Endpoints ep = apache.rocketmq.v2.Endpoints.newBuilder()
                .setScheme(AddressScheme.IPv4)
                .addAddresses(Address.newBuilder().setHost(hp[0]).setPort(Integer.parseInt(hp[1])))
                .build();
            return apache.rocketmq.v2.MessageQueue.newBuilder()
                .setTopic(Resource.newBuilder().setName(topic))
                .setId(queueId)
                .setPermission(perm)
                .setBroker(apache.rocketmq.v2.Broker.newBuilder().setName(broker).setId(brokerId).setEndpoints(ep))
                .addAcceptMessageTypes(MessageType.NORMAL)
                .addAcceptMessageTypes(MessageType.FIFO)
                .addAcceptMessageTypes(MessageType.DELAY)
                .addAcceptMessageTypes(MessageType.TRANSACTION)
                .build();
        }

        JsonArray json() {
            JsonArray a = new JsonArray();
            a.add(topic);
            a.add(broker);
            a.add(brokerId);
            a.add(endpoints);
            a.add(queueId);
            a.add(perm.name());
            return a;
        }
    }

    /** The endpoints' first address, "host:port". */
    static String hostPort(Endpoints e) {
        return e.getAddresses().get(0).getHost() + ":" + e.getAddresses().get(0).getPort();
    }

    static JsonArray shortOf(MessageQueueImpl mq) {
        JsonArray a = new JsonArray();
        a.add(mq.getBroker().getName());
        a.add(mq.getQueueId());
        return a;
    }

    static JsonArray shortsOf(List<MessageQueueImpl> mqs) {
        JsonArray a = new JsonArray();
        for (MessageQueueImpl mq : mqs) {
            a.add(shortOf(mq));
        }
        return a;
    }

    /** A random route: 1-6 brokers, masters and sometimes slaves, shared (Proxy) or own endpoints. */
    static List<Q> route(Random r, String topic) {
        int brokers = 1 + r.nextInt(6);
        List<String> names = new ArrayList<>();
        List<String> pool = new ArrayList<>(List.of(NAMES));
        Collections.shuffle(pool, r);
        for (int i = 0; i < brokers; i++) {
            names.add(pool.get(i));
        }
        Collections.sort(names);
        int mode = r.nextInt(3);              // 0: one Proxy endpoint; 1: own endpoints; 2: some shared
        List<Q> out = new ArrayList<>();
        for (int b = 0; b < names.size(); b++) {
            String ep = mode == 0 ? "10.0.9.1:8081" : mode == 1 ? "10.0.0." + (b + 1) + ":8081"
                : "10.0.1." + r.nextInt(3) + ":8081";
            int queues = 1 + r.nextInt(8);
            boolean slave = r.nextInt(4) == 0;
            for (int id = 0; id <= (slave ? 1 : 0); id++) {
                String epId = id == 0 ? ep : "10.0.2." + (b + 1) + ":8081";
                for (int q = 0; q < queues; q++) {
                    Permission p = r.nextInt(5) == 0 ? PERMS[r.nextInt(PERMS.length)] : Permission.READ_WRITE;
                    out.add(new Q(topic, names.get(b), id, epId, q, p));
                }
            }
        }
        if (r.nextInt(4) == 0) {
            Collections.shuffle(out, r);
        }
        return out;
    }

    static TopicRouteData routeData(List<Q> qs) {
        List<apache.rocketmq.v2.MessageQueue> list = new ArrayList<>();
        for (Q q : qs) {
            list.add(q.proto());
        }
        return new TopicRouteData(list);
    }

    static JsonArray routeJson(List<Q> qs) {
        JsonArray a = new JsonArray();
        for (Q q : qs) {
            a.add(q.json());
        }
        return a;
    }

    static int indexStart(Random r) {
        switch (r.nextInt(6)) {
            case 0:
                return Integer.MAX_VALUE - r.nextInt(12);
            case 1:
                return r.nextInt(20);
            case 2:
                return Integer.MIN_VALUE + r.nextInt(12);
            default:
                return r.nextInt(Integer.MAX_VALUE);
        }
    }

    static String group(Random r) {
        switch (r.nextInt(8)) {
            case 0:
                return "";
            case 1: {
                StringBuilder sb = new StringBuilder();
                int n = 1 + r.nextInt(6);
                for (int i = 0; i < n; i++) {
                    int k = r.nextInt(4);
                    sb.append(k == 0 ? "é" : k == 1 ? "顺序" : k == 2 ? "\uD83D\uDE80" : "g");
                }
                return sb.toString();
            }
            case 2: {
                StringBuilder sb = new StringBuilder();
                int n = r.nextInt(200);
                for (int i = 0; i < n; i++) {
                    sb.append((char) (32 + r.nextInt(95)));
                }
                return sb.toString();
            }
            default:
                return "order-" + r.nextInt(100000);
        }
    }

    static Field field(Class<?> c, String name) throws Exception {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    /** A balancer (PublishingLoadBalancer, SubscriptionLoadBalancer) through its private constructor, its counter
     *  starting at start. */
    static <B> B balancer(Class<B> k, int start, TopicRouteData route) throws Exception {
        Constructor<B> c = k.getDeclaredConstructor(AtomicInteger.class, TopicRouteData.class);
        c.setAccessible(true);
        try {
            return c.newInstance(new AtomicInteger(start), route);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    static Object invoke(Object target, Class<?> c, String name, Class<?>[] types, Object... args) throws Exception {
        Method m = c.getDeclaredMethod(name, types);
        m.setAccessible(true);
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    static int stored(Object balancer) throws Exception {
        return ((AtomicInteger) field(balancer.getClass(), "index").get(balancer)).get();
    }

    /** The route's endpoints, each once, sorted. */
    static List<String> endpointsOfRoute(List<Q> qs) {
        Set<String> s = new HashSet<>();
        for (Q q : qs) {
            s.add(q.endpoints());
        }
        List<String> sorted = new ArrayList<>(s);
        Collections.sort(sorted);
        return sorted;
    }

    static List<Q> mutate(Random r, List<Q> qs, String topic) {
        if (r.nextInt(3) == 0) {
            return route(r, topic);
        }
        List<Q> out = new ArrayList<>();
        for (Q q : qs) {
            int k = r.nextInt(10);
            if (k == 0) {
                continue;
            }
            out.add(k == 1 ? new Q(q.topic(), q.broker(), q.brokerId(), q.endpoints(), q.queueId(),
                PERMS[r.nextInt(PERMS.length)]) : q);
        }
        return out;
    }

    static JsonObject source(String version) {
        JsonObject s = new JsonObject();
        s.addProperty("artifact", "org.apache.rocketmq:rocketmq-client-java");
        s.addProperty("version", version);
        s.addProperty("jvm", Runtime.version().feature());
        s.addProperty("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        return s;
    }

    static JsonObject error(Exception e) {
        JsonObject o = new JsonObject();
        o.addProperty("type", e.getClass().getSimpleName());
        return o;
    }

    static boolean hasMaster(List<Q> qs, Permission can) {
        for (Q q : qs) {
            if (q.brokerId() == 0 && (q.perm() == can || q.perm() == Permission.READ_WRITE)) {
                return true;
            }
        }
        return false;
    }

    /** How a balancer takes a new route (its update, which throws IllegalArgumentException when it refuses it). */
    interface Update<B> {
        B apply(B balancer, TopicRouteData route) throws Exception;
    }

    /** One step of a case, written into step. */
    interface Step {
        void make(JsonObject step) throws Exception;
    }

    /** A case's balancer and the route it holds (qs). */
    static final class Routed<B> {
        List<Q> qs;
        B lb;

        Routed(List<Q> qs, B lb) {
            this.qs = qs;
            this.lb = lb;
        }

        /** A case's start: a route drawn until a master queue has permission can (or READ_WRITE) and the counter's
         *  start, both written into o ("queues", "index_start"), and a balancer of class k on them. */
        static <B> Routed<B> draw(Random r, String topic, Permission can, Class<B> k, JsonObject o) throws Exception {
            List<Q> qs;
            do {
                qs = route(r, topic);
            } while (!hasMaster(qs, can));
            int start = indexStart(r);
            o.add("queues", routeJson(qs));
            o.addProperty("index_start", start);
            return new Routed<>(qs, balancer(k, start, routeData(qs)));
        }

        /** The case's "steps": 5 + r.nextInt(more) of them, each made by step, then given the counter after it
         *  ("stored"). */
        void steps(Random r, int more, JsonObject o, Step step) throws Exception {
            JsonArray steps = new JsonArray();
            int n = 5 + r.nextInt(more);
            for (int s = 0; s < n; s++) {
                JsonObject one = new JsonObject();
                step.make(one);
                one.addProperty("stored", stored(lb));
                steps.add(one);
            }
            o.add("steps", steps);
        }

        /** An "update" step: a route mutated from qs handed to the balancer (how), written into step ("queues", and
         *  "expect" null, or the error when the balancer refused it and both stay as they were). */
        void update(Random r, String topic, JsonObject step, Update<B> how) throws Exception {
            List<Q> next = mutate(r, qs, topic);
            step.addProperty("op", "update");
            step.add("queues", routeJson(next));
            try {
                lb = how.apply(lb, routeData(next));
                qs = next;
                step.add("expect", JsonNull.INSTANCE);
            } catch (IllegalArgumentException e) {
                step.add("expect", error(e));
            }
        }
    }

    // ------------------------------------------------------------------ siphash
    static JsonObject siphash(Random r, int i) {
        String g = group(r);
        long h = Hashing.sipHash24().hashBytes(g.getBytes(StandardCharsets.UTF_8)).asLong();
        JsonObject o = new JsonObject();
        o.addProperty("group", g);
        o.addProperty("hash", h);
        JsonArray sizes = new JsonArray();
        JsonArray idx = new JsonArray();
        for (int size : new int[] {1, 2, 3, 4, 7, 8, 16, 24, 100, 1 + r.nextInt(1000), Integer.MAX_VALUE}) {
            sizes.add(size);
            idx.add(LongMath.mod(h, size));
        }
        o.addProperty("mods", "");
        o.remove("mods");
        o.add("sizes", sizes);
        o.add("index", idx);
        return o;
    }

    // ------------------------------------------------------------------ publishing
    static JsonObject publishingCase(Random r, String topic) throws Exception {
        JsonObject o = new JsonObject();
        Routed<PublishingLoadBalancer> now = Routed.draw(r, topic, Permission.WRITE, PublishingLoadBalancer.class, o);
        now.steps(r, 25, o, step -> {
            int k = r.nextInt(10);
            if (k < 6) {
                List<String> eps = endpointsOfRoute(now.qs);
                Set<String> excludedNames = new HashSet<>();
                int how = r.nextInt(4);
                for (String e : eps) {
                    if (how == 3 || (how > 0 && r.nextBoolean())) {
                        excludedNames.add(e);
                    }
                }
                if (r.nextInt(6) == 0) {
                    excludedNames.add("10.9.9.9:8081");
                }
                Set<Endpoints> excluded = new HashSet<>();
                JsonArray ex = new JsonArray();
                List<String> sortedEx = new ArrayList<>(excludedNames);
                Collections.sort(sortedEx);
                for (String e : sortedEx) {
                    excluded.add(new Endpoints(e));
                    ex.add(e);
                }
                int count = 1 + r.nextInt(5);
                step.addProperty("op", "take");
                step.add("excluded", ex);
                step.addProperty("count", count);
                step.add("expect", shortsOf(now.lb.takeMessageQueues(excluded, count)));
            } else if (k < 9) {
                String g = group(r);
                step.addProperty("op", "group");
                step.addProperty("group", g);
                step.add("expect", shortOf(now.lb.takeMessageQueueByMessageGroup(g)));
            } else {
                now.update(r, topic, step, PublishingLoadBalancer::update);
            }
        });
        return o;
    }

    // ------------------------------------------------------------------ subscription
    static JsonObject subscriptionCase(Random r, String topic) throws Exception {
        JsonObject o = new JsonObject();
        Routed<SubscriptionLoadBalancer> now = Routed.draw(r, topic, Permission.READ, SubscriptionLoadBalancer.class,
            o);
        now.steps(r, 30, o, step -> {
            if (r.nextInt(8) != 0) {
                step.addProperty("op", "take");
                step.add("expect", shortOf(now.lb.takeMessageQueue()));
            } else {
                // update is package-private in the consumer's package
                now.update(r, topic, step, (lb, route) -> (SubscriptionLoadBalancer) invoke(lb,
                    SubscriptionLoadBalancer.class, "update", new Class<?>[] {TopicRouteData.class}, route));
            }
        });
        return o;
    }

    // ------------------------------------------------------------------ send
    /** Answers each send as scripted, records the queue each attempt used, answers heartbeats OK. */
    static final class Scripted extends ClientManager {
        final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "scripted-scheduler");
            t.setDaemon(true);
            return t;
        });
        final List<String> outcomes = new ArrayList<>();
        int next;

        @Override
        public ScheduledExecutorService getScheduler() {
            return scheduler;
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.QueryRouteRequest, apache.rocketmq.v2.QueryRouteResponse> queryRoute(
            Endpoints endpoints, apache.rocketmq.v2.QueryRouteRequest request, Duration duration) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<HeartbeatRequest, HeartbeatResponse> heartbeat(Endpoints endpoints,
            HeartbeatRequest request, Duration duration) {
            HeartbeatResponse resp = HeartbeatResponse.newBuilder()
                .setStatus(Status.newBuilder().setCode(Code.OK)).build();
            return new RpcFuture<>(new Context(endpoints, new Metadata()), request, Futures.immediateFuture(resp));
        }

        @Override
        public synchronized RpcFuture<SendMessageRequest, SendMessageResponse> sendMessage(Endpoints endpoints,
            SendMessageRequest request, Duration duration) {
            String o = outcomes.get(next++);
            if ("ok".equals(o)) {
                SendMessageResponse.Builder b = SendMessageResponse.newBuilder()
                    .setStatus(Status.newBuilder().setCode(Code.OK));
                for (apache.rocketmq.v2.Message m : request.getMessagesList()) {
                    b.addEntries(SendResultEntry.newBuilder().setStatus(Status.newBuilder().setCode(Code.OK))
                        .setMessageId(m.getSystemProperties().getMessageId()).setOffset(7));
                }
                return new RpcFuture<>(new Context(endpoints, new Metadata()), request,
                    Futures.immediateFuture(b.build()));
            }
            if ("throttled".equals(o)) {
                return new RpcFuture<>(new TooManyRequestsException(Code.TOO_MANY_REQUESTS_VALUE, "r", "busy"));
            }
            return new RpcFuture<>(new java.io.IOException("unavailable"));
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.QueryAssignmentRequest, apache.rocketmq.v2.QueryAssignmentResponse>
            queryAssignment(Endpoints e, apache.rocketmq.v2.QueryAssignmentRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.ReceiveMessageRequest, List<apache.rocketmq.v2.ReceiveMessageResponse>>
            receiveMessage(Endpoints e, apache.rocketmq.v2.ReceiveMessageRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.AckMessageRequest, apache.rocketmq.v2.AckMessageResponse> ackMessage(
            Endpoints e, apache.rocketmq.v2.AckMessageRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.ChangeInvisibleDurationRequest,
            apache.rocketmq.v2.ChangeInvisibleDurationResponse> changeInvisibleDuration(Endpoints e,
            apache.rocketmq.v2.ChangeInvisibleDurationRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.ForwardMessageToDeadLetterQueueRequest,
            apache.rocketmq.v2.ForwardMessageToDeadLetterQueueResponse> forwardMessageToDeadLetterQueue(
            Endpoints e, apache.rocketmq.v2.ForwardMessageToDeadLetterQueueRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.EndTransactionRequest, apache.rocketmq.v2.EndTransactionResponse>
            endTransaction(Endpoints e, apache.rocketmq.v2.EndTransactionRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.NotifyClientTerminationRequest,
            apache.rocketmq.v2.NotifyClientTerminationResponse> notifyClientTermination(Endpoints e,
            apache.rocketmq.v2.NotifyClientTerminationRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RpcFuture<apache.rocketmq.v2.RecallMessageRequest, apache.rocketmq.v2.RecallMessageResponse>
            recallMessage(Endpoints e, apache.rocketmq.v2.RecallMessageRequest q, Duration d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public StreamObserver<apache.rocketmq.v2.TelemetryCommand> telemetry(Endpoints e, Duration d,
            StreamObserver<apache.rocketmq.v2.TelemetryCommand> o) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected void startUp() {
        }

        @Override
        protected void shutDown() {
        }
    }

    /** ProducerImpl, recording the queue of each attempt (send0(endpoints, messages, mq) is package-private). */
    static final class Recording extends ProducerImpl {
        final List<MessageQueueImpl> used = Collections.synchronizedList(new ArrayList<>());

        Recording(ClientConfiguration cc, Set<String> topics, int maxAttempts) {
            super(cc, topics, maxAttempts, null);
        }

        @Override
        org.apache.rocketmq.shaded.com.google.common.util.concurrent.ListenableFuture<List<SendReceiptImpl>> send0(
            Endpoints endpoints, List<PublishingMessageImpl> pubMessages, MessageQueueImpl mq) {
            used.add(mq);
            return super.send0(endpoints, pubMessages, mq);
        }
    }

    static JsonObject sendCase(Random r, String topic) throws Exception {
        JsonObject o = new JsonObject();
        Routed<PublishingLoadBalancer> now = Routed.draw(r, topic, Permission.WRITE, PublishingLoadBalancer.class, o);
        int maxAttempts = 1 + r.nextInt(5);
        o.addProperty("max_attempts", maxAttempts);
        ClientConfiguration cc = ClientConfiguration.newBuilder().setEndpoints("127.0.0.1:8081").build();
        Recording producer = new Recording(cc, Set.of(topic), maxAttempts);
        Scripted manager = new Scripted();
        field(ClientImpl.class, "clientManager").set(producer, manager);
        @SuppressWarnings("unchecked")
        Set<Endpoints> isolated = (Set<Endpoints>) field(ClientImpl.class, "isolated").get(producer);
        Method send0 = ProducerImpl.class.getDeclaredMethod("send0", SettableFuture.class, String.class,
            org.apache.rocketmq.client.java.message.MessageType.class, List.class, List.class, int.class);
        send0.setAccessible(true);
        Method take = ProducerImpl.class.getDeclaredMethod("takeMessageQueues", PublishingLoadBalancer.class);
        take.setAccessible(true);
        Method heartbeat = ClientImpl.class.getDeclaredMethod("doHeartbeat", HeartbeatRequest.class, Endpoints.class);
        heartbeat.setAccessible(true);
        PublishingSettings settings = producer.publishingSettings;
        double failRate = new double[] {0.1, 0.3, 0.6, 0.9}[r.nextInt(4)];
        now.steps(r, 20, o, step -> {
            int k = r.nextInt(12);
            if (k < 9) {
                boolean fifo = r.nextInt(4) == 0;
                String g = fifo ? "order-" + r.nextInt(50) : null;
                List<String> outcomes = new ArrayList<>();
                for (int a = 0; a < maxAttempts; a++) {
                    double x = r.nextDouble();
                    outcomes.add(x < failRate ? (r.nextInt(5) == 0 ? "throttled" : "fail") : "ok");
                }
                manager.outcomes.clear();
                manager.outcomes.addAll(outcomes);
                manager.next = 0;
                producer.used.clear();
                MessageBuilderImpl mb = new MessageBuilderImpl();
                mb.setTopic(topic).setBody(new byte[] {1, 2, 3});
                if (g != null) {
                    mb.setMessageGroup(g);
                }
                PublishingMessageImpl pm = new PublishingMessageImpl(mb.build(), settings, false);
                // ProducerImpl.send: the candidates, taken once (a FIFO message: its group's queue).
                @SuppressWarnings("unchecked")
                List<MessageQueueImpl> candidates = g == null ? (List<MessageQueueImpl>) take.invoke(producer, now.lb)
                    : Collections.singletonList(now.lb.takeMessageQueueByMessageGroup(g));
                SettableFuture<List<SendReceiptImpl>> future0 = SettableFuture.create();
                send0.invoke(producer, future0, topic, pm.getMessageType(), candidates,
                    Collections.singletonList(pm), 1);
                boolean ok;
                try {
                    future0.get(30, TimeUnit.SECONDS);
                    ok = true;
                } catch (ExecutionException e) {
                    ok = false;
                }
                step.addProperty("op", "send");
                step.add("group", g == null ? JsonNull.INSTANCE : GSON.toJsonTree(g));
                JsonArray outs = new JsonArray();
                for (int a = 0; a < manager.next; a++) {
                    outs.add(outcomes.get(a));
                }
                step.add("outcomes", outs);
                JsonObject expect = new JsonObject();
                expect.add("candidates", shortsOf(candidates));
                expect.add("attempts", shortsOf(new ArrayList<>(producer.used)));
                expect.addProperty("ok", ok);
                step.add("expect", expect);
            } else if (k < 11) {
                List<String> eps = endpointsOfRoute(now.qs);
                String e = eps.get(r.nextInt(eps.size()));
                heartbeat.invoke(producer, HeartbeatRequest.newBuilder().build(), new Endpoints(e));
                step.addProperty("op", "heartbeat_ok");
                step.addProperty("endpoints", e);
            } else {
                now.update(r, topic, step, PublishingLoadBalancer::update);
            }
            List<String> iso = new ArrayList<>();
            for (Endpoints e : isolated) {
                iso.add(hostPort(e));
            }
            Collections.sort(iso);
            JsonArray isoJson = new JsonArray();
            iso.forEach(isoJson::add);
            step.add("isolated", isoJson);
        });
        manager.scheduler.shutdownNow();
        return o;
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    static void run(String[] args) throws Exception {
        String family = args[0];
        long seed = Long.parseLong(args[1]);
        int cases = Integer.parseInt(args[2]);
        String version = args[3];
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        Random r = new Random(seed ^ family.hashCode());
        for (int i = 0; i < cases; i++) {
            String topic = r.nextInt(10) == 0 ? ("send".equals(family) ? "Topic_" : "主题-") + i : "TopicTest";
            JsonObject o;
            switch (family) {
                case "siphash":
                    o = siphash(r, i);
                    break;
                case "publishing":
                    o = publishingCase(r, topic);
                    break;
                case "subscription":
                    o = subscriptionCase(r, topic);
                    break;
                case "send":
                    o = sendCase(r, topic);
                    break;
                default:
                    throw new IllegalArgumentException(family);
            }
            JsonObject line = new JsonObject();
            line.addProperty("id", String.format("grpc-%s-%05d", family, i));
            line.addProperty("grpc", family);
            line.add("source", source(version));
            for (String k : o.keySet()) {
                line.add(k, o.get(k));
            }
            out.println(GSON.toJson(line));
        }
        out.flush();
    }
}
