// Prints what upstream's SelectMessageQueueByHash computes for each key and queue count, on the
// 4.9.8/5.3.3 rule (mod, then abs) and the 4.7.1 rule (abs, then mod), using the JDK's own
// String.hashCode, Integer.hashCode and Long.hashCode. Run by tests/test_selectors.py:
//   java tests/java/SelectByHash.java KEYS_FILE N [N ...]
// KEYS_FILE: UTF-8, one key per line; "s:<text>" is a String, "i:<n>" an Integer, "l:<n>" a Long.
// Output: one line per key and N: "<index 4.9.8> <index 4.7.1 or X for an index error>".
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public class SelectByHash {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            Object key;
            String body = line.substring(2);
            switch (line.charAt(0)) {
                case 's': key = body; break;
                case 'i': key = Integer.valueOf(body); break;
                case 'l': key = Long.valueOf(body); break;
                default: throw new IllegalArgumentException(line);
            }
            for (int a = 1; a < args.length; a++) {
                int n = Integer.parseInt(args[a]);
                int v = key.hashCode() % n;          // 4.9.8, 5.3.3
                if (v < 0) {
                    v = Math.abs(v);
                }
                int w = Math.abs(key.hashCode());    // 4.7.1
                w = w % n;
                out.append(v).append(' ').append(w < 0 ? "X" : String.valueOf(w)).append('\n');
            }
        }
        System.out.print(out);
    }
}
