package dev.weft.spi;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.attribute.LineNumberInfo;
import java.util.Comparator;
import java.util.Set;
import java.util.function.Supplier;

/** A place in the user's source: the first stack frame outside Weft's own packages. */
public record SourceLocation(String className, String method, String file, int line) {
    public static final SourceLocation UNKNOWN = new SourceLocation("?", "?", "<unknown>", -1);

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    /** Public API packages (exact) whose frames are never the user's. */
    private static final Set<String> API_PACKAGES = Set.of("dev.weft", "dev.weft.comm", "dev.weft.shard",
            "dev.weft.io", "dev.weft.nn", "dev.weft.optim", "dev.weft.random");
    private static final String[] INTERNAL_PREFIXES = {
        "dev.weft.spi.", "dev.weft.prim.", "dev.weft.graph.", "dev.weft.ad.", "dev.weft.batching.", "dev.weft.tracer.",
        "dev.weft.lowering.", "dev.weft.backends.",
        "java.", "jdk.", "sun.", "net.bytebuddy.", "org.junit.", "org.assertj."
    };

    /** The location {@link #attributing} set for this thread, or {@code null}. */
    private static final ThreadLocal<SourceLocation> ATTRIBUTED = new ThreadLocal<>();

    /**
     * The caller's location: the innermost frame that belongs to neither Weft, the JDK nor test frameworks; inside
     * {@link #attributing}, the location given there.
     */
    public static SourceLocation capture() {
        SourceLocation attributed = ATTRIBUTED.get();
        if (attributed != null) {
            return attributed;
        }
        return WALKER.walk(frames -> frames
                .filter(f -> !isInternal(f.getClassName()))
                .findFirst()
                .map(SourceLocation::of)
                .orElse(UNKNOWN));
    }

    /**
     * The location of {@code f}. A frame that was running when the agent retransformed its class (a {@code main}
     * that installed it) has no line in the JVM's stack frames any more; its line is then read from the class
     * file, whose bytecode such a frame still runs.
     */
    public static SourceLocation of(StackWalker.StackFrame f) {
        if (f.getLineNumber() >= 0) {
            return new SourceLocation(f.getClassName(), f.getMethodName(),
                    f.getFileName() == null ? "<unknown>" : f.getFileName(), f.getLineNumber());
        }
        Class<?> c = f.getDeclaringClass();
        try (InputStream in = c.getResourceAsStream(c.getName().substring(c.getName().lastIndexOf('.') + 1)
                + ".class")) {
            ClassModel cm = ClassFile.of().parse(in.readAllBytes());
            String file = cm.findAttribute(Attributes.sourceFile()).map(a -> a.sourceFile().stringValue())
                    .orElse("<unknown>");
            int line = cm.methods().stream()
                    .filter(m -> m.methodName().equalsString(f.getMethodName())
                            && m.methodType().equalsString(f.getDescriptor()))
                    .flatMap(m -> m.code().stream())
                    .flatMap(code -> code.findAttribute(Attributes.lineNumberTable()).stream())
                    .flatMap(t -> t.lineNumbers().stream())
                    .filter(n -> n.startPc() <= f.getByteCodeIndex())
                    .max(Comparator.comparingInt(LineNumberInfo::startPc))
                    .map(LineNumberInfo::lineNumber)
                    .orElse(-1);
            return new SourceLocation(f.getClassName(), f.getMethodName(), file, line);
        } catch (IOException | RuntimeException e) {
            return new SourceLocation(f.getClassName(), f.getMethodName(), "<unknown>", -1);
        }
    }

    /**
     * Runs {@code body} with {@code where} as the location every capture on this thread gives (unless unknown):
     * operations that Weft itself performs for a recorded node (evaluating or rewriting a region, applying its
     * derivative rule) then name that node's line, in the graph and in errors.
     */
    public static <T> T attributing(SourceLocation where, Supplier<T> body) {
        if (where == null || where.isUnknown()) {
            return body.get();
        }
        SourceLocation outer = ATTRIBUTED.get();
        ATTRIBUTED.set(where);
        try {
            return body.get();
        } finally {
            if (outer == null) {
                ATTRIBUTED.remove();
            } else {
                ATTRIBUTED.set(outer);
            }
        }
    }

    /** Whether frames of {@code className} are Weft's, the JDK's or a test framework's, never the user's. */
    public static boolean isInternal(String className) {
        int dot = className.lastIndexOf('.');
        String pkg = dot < 0 ? "" : className.substring(0, dot);
        if (API_PACKAGES.contains(pkg)) {
            return true;
        }
        for (String p : INTERNAL_PREFIXES) {
            if (className.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    public boolean isUnknown() {
        return line < 0;
    }

    /** Like {@code Heat.java:42}. */
    @Override
    public String toString() {
        return file + ":" + line;
    }
}
