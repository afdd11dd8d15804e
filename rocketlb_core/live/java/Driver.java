// rocketlb live drivers' shared code: what Produce.java, Consume.java, DumpTopic.java,
// GrpcProduce.java and GrpcConsume.java each extend (their rows' quoting, their optional
// arguments, waiting for a file, one row at a time on stdout, a gRPC client's start tried
// again). Plain JDK, so one build serves every line's client jars and the gRPC client's:
// rocketlb_core.live.cluster compiles it once per cluster onto the class path of the remoting
// drivers (a single-file source launch compiles its own file only) and with the gRPC drivers'
// log binding. Public throughout: a source launch loads its class in a class loader of its
// own, which is another runtime package than this class's.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

public class Driver {
    protected Driver() {
    }

    // s as a JSON string: '"' and '\' escaped, control characters and DEL as 4-digit
    // escapes, every other character as it is; null as JSON's null
    public static String quote(String s) {
        if (s == null) { return "null"; }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') { b.append('\\').append(c); }
            else if (c < 0x20 || c == 0x7f) { b.append(String.format("\\u%04x", (int) c)); }
            else { b.append(c); }
        }
        return b.append('"').toString();
    }

    // what a row's "error" says of a failed call: the exception's class and its message
    public static String error(Exception e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    // one row on stdout, whole, and flushed at once (threads and listeners share stdout)
    public static synchronized void emit(String row) {
        System.out.println(row);
        System.out.flush();
    }

    // the optional argument i, or otherwise when the command line stops before it
    public static String arg(String[] args, int i, String otherwise) {
        return args.length > i ? args[i] : otherwise;
    }

    public static int arg(String[] args, int i, int otherwise) {
        return args.length > i ? Integer.parseInt(args[i]) : otherwise;
    }

    // wait, pollMs at a time, until file exists (a GO_FILE or a STOP_FILE)
    public static void awaitFile(Path file, long pollMs) throws InterruptedException {
        while (!Files.exists(file)) {
            Thread.sleep(pollMs);
        }
    }

    // A gRPC client's build(): it starts the client and fetches the topic's route, each call
    // with a deadline of the request timeout set when it is made; a JVM still loading its
    // classes on a loaded host can spend most of it before the call goes out (seen:
    // DEADLINE_EXCEEDED after 0.34 s of 3 s). A start that failed is tried again, 1 s later,
    // up to 5 times in all; a bad argument (IllegalArgumentException) is thrown at once.
    public static <T> T startRetried(Callable<T> build) throws Exception {
        for (int tries = 1; ; tries++) {
            try {
                return build.call();
            } catch (IllegalArgumentException e) {
                throw e;
            } catch (Exception e) {
                if (tries >= 5) { throw e; }
                System.err.println("start " + tries + " failed, trying again: " + e);
                Thread.sleep(1000);
            }
        }
    }
}
