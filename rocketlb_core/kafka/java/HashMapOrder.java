// The iteration order of java.util.HashMap after a sequence of insertions, printed by the JVM
// that runs this file, for tests/test_javamath.py (javamath.JavaHashMap). Single-file source
// launch, no dependencies: `java HashMapOrder.java < ops`. Each input line is one operation:
//   new              a new HashMap<>() (the next lines fill it)
//   new <n>          a new HashMap<>(n)
//   put <key>        map.put(key, "")
//   cia <key>        map.computeIfAbsent(key, k -> "")
//   rm <key>         map.remove(key)
//   stage <key>      put key into a LinkedHashMap (kept in that order) for the next copy
//   putall           map.putAll(the staged map)
//   copymap          map = new HashMap<>(the staged map)
//   copyset          a new HashSet<>(the staged keys), printed by the next end instead of map
//   end              print the map's keys in iteration order, tab-separated, on one line
// (a copy empties the staged map). The copies are sized differently from Java 19 on
// (HashMap.calculateHashMapCapacity): run it on each JVM.
// Keys are Strings written as UTF-16 code units in hex, 4 digits each, so that any String
// (unpaired surrogates too) passes through unchanged; the output writes them the same way.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.StringJoiner;

public final class HashMapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        HashMap<String, String> map = new HashMap<>();
        LinkedHashMap<String, String> staged = new LinkedHashMap<>();
        Collection<String> shown = null;
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
                case "stage": staged.put(decode(arg), ""); break;
                case "putall": map.putAll(staged); staged = new LinkedHashMap<>(); break;
                case "copymap": map = new HashMap<>(staged); staged = new LinkedHashMap<>(); break;
                case "copyset": shown = new HashSet<>(staged.keySet()); staged = new LinkedHashMap<>(); break;
                case "end": {
                    StringJoiner j = new StringJoiner("\t");
                    for (String k : shown != null ? shown : map.keySet()) j.add(encode(k));
                    shown = null;
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
