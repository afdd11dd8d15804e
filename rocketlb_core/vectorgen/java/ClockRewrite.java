/*
 * Redirects the wall clock of released classes to a virtual one (Java 24+: java.lang.classfile).
 *
 * java ClockRewrite.java JAR OUT_DIR CLOCK_CLASS CLASS...
 *
 * Reads each named class (internal name, e.g. org/apache/rocketmq/client/latency/LatencyFaultToleranceImpl)
 * from JAR, replaces every `invokestatic java/lang/System.currentTimeMillis()J` by
 * `invokestatic CLOCK_CLASS.currentTimeMillis()J` and writes the class under OUT_DIR, which goes before the
 * jar on the class path. Nothing else of the class changes (same class file version, same code otherwise);
 * the number of calls rewritten per class is printed, so a class without clock calls is noticed.
 */
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.ZipFile;

public class ClockRewrite {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[1]);
        ClassDesc clock = ClassDesc.ofInternalName(args[2]);
        try (ZipFile jar = new ZipFile(args[0])) {
            for (int i = 3; i < args.length; i++) {
                String name = args[i] + ".class";
                var entry = jar.getEntry(name);
                if (entry == null) {
                    throw new IllegalArgumentException(name + " is not in " + args[0]);
                }
                byte[] bytes = jar.getInputStream(entry).readAllBytes();
                AtomicInteger count = new AtomicInteger();
                CodeTransform code = (builder, element) -> {
                    if (element instanceof InvokeInstruction inv
                            && inv.owner().asInternalName().equals("java/lang/System")
                            && inv.name().equalsString("currentTimeMillis")) {
                        count.incrementAndGet();
                        builder.invokestatic(clock, "currentTimeMillis", MethodTypeDesc.ofDescriptor("()J"));
                    } else {
                        builder.with(element);
                    }
                };
                ClassFile cf = ClassFile.of();
                byte[] rewritten = cf.transformClass(cf.parse(bytes), ClassTransform.transformingMethodBodies(code));
                Path target = out.resolve(name);
                Files.createDirectories(target.getParent());
                Files.write(target, rewritten);
                System.out.println(args[i] + " " + count.get());
            }
        }
    }
}
