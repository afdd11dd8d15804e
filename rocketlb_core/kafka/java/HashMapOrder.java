// The iteration order of java.util.HashMap after a sequence of insertions, printed by the JVM
// that runs this file, for tests/test_javamath.py (javamath.JavaHashMap). Single-file source
// launch, no dependencies: `java HashMapOrder.java < ops`. Each input line is one operation:
//   new              a new HashMap<>() (the next lines fill it)
//   new <n>          a new HashMap<>(n)
//   put <key>        map.put(key, "")
//   cia <key>        map.computeIfAbsent(key, k -> "")
//   rm <key>         map.remove(key)
//   end              print the map's keys in iteration order, tab-separated, on one line
// Keys are Strings written as UTF-16 code units in hex, 4 digits each, so that any String
// (unpaired surrogates too) passes through unchanged; the output writes them the same way.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.StringJoiner;

public final class HashMapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        HashMap<String, String> map = new HashMap<>();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) continue;
            int sp = line.indexOf(' ');
            String op = sp < 0 ? line : line.substring(0, sp);
            String arg = sp < 0 ? "" : line.substring(sp + 1);
            switch (op) {
                case "new": map = arg.isEmpty() ? new HashMap<>() : new HashMap<>(Integer.parseInt(arg)); break;
                case "put": map.put(decode(arg), ""); break;
                case "cia": map.computeIfAbsent(decode(arg), k -> ""); break;
                case "rm": map.remove(decode(arg)); break;
                case "end": {
                    StringJoiner j = new StringJoiner("\t");
                    for (String k : map.keySet()) j.add(encode(k));
                    out.append(j).append('\n');
                    break;
                }
                default: throw new IllegalArgumentException("unknown operation " + op);
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    static String decode(String hex) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < hex.length(); i += 4) sb.append((char) Integer.parseInt(hex.substring(i, i + 4), 16));
        return sb.toString();
    }

    static String encode(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) sb.append(String.format("%04x", (int) s.charAt(i)));
        return sb.toString();
    }
}
