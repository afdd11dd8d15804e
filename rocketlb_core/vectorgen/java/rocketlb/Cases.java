package rocketlb;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;

/**
 * What the Proxy's and the broker's vector generators share (ProxyAssignmentVectors, BrokerAssignmentVectors,
 * ProxyGroupQueueVectors; compiled with each by rocketlb_core/vectorgen/proxy.py): every case's "source" and the
 * loop that prints the cases, one JSON object a line on stdout.
 */
final class Cases {
    private Cases() {
    }

    /** What a case holds besides its id, kind and source: drawn and answered into c, the i-th case. */
    interface Fill {
        void fill(JSONObject c, int i) throws Exception;
    }

    /** The source of every case: the artifact (org.apache.rocketmq:ARTIFACT) and version that answered, the method
     *  run (Class#method), the seed, and the Java that ran it. */
    static JSONObject source(String artifact, String version, String method, long seed) {
        JSONObject source = new JSONObject(new LinkedHashMap<>());
        source.put("artifact", "org.apache.rocketmq:" + artifact);
        source.put("version", version);
        source.put("class", method);
        source.put("seed", seed);
        source.put("jvm", Runtime.version().feature());
        source.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        return source;
    }

    /** Print cases cases of kind grpc: "id" (KIND-VERSION-NNNNN), "grpc" (the kind), "source", then what fill puts,
     *  written with features. */
    static void print(String grpc, String version, JSONObject source, int cases, Fill fill,
                      JSONWriter.Feature... features) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (int i = 0; i < cases; i++) {
            JSONObject c = new JSONObject(new LinkedHashMap<>());
            c.put("id", String.format("%s-%s-%05d", grpc, version, i));
            c.put("grpc", grpc);
            c.put("source", source);
            fill.fill(c, i);
            out.println(JSON.toJSONString(c, features));
        }
        out.flush();
    }
}
