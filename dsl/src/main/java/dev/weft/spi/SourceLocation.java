package dev.weft.spi;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.attribute.LineNumberInfo;
import java.util.Comparator;
import java.util.Set;

/** A place in the user's source: the first stack frame outside Weft's own packages. */
public record SourceLocation(String className, String method, String file, int line) {
    public static final SourceLocation UNKNOWN = new SourceLocation("?", "?", "<unknown>", -1);

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    /** Public API packages (exact) whose frames are never the user's. */
    private static final Set<String> API_PACKAGES = Set.of("dev.weft", "dev.weft.comm");
    private static final String[] INTERNAL_PREFIXES = {
        "dev.weft.spi.", "dev.weft.prim.", "dev.weft.tracer.", "dev.weft.lowering.", "dev.weft.backends.",
        "java.", "jdk.", "sun.", "net.bytebuddy.", "org.junit.", "org.assertj."
    };

    /** The caller's location: the innermost frame that belongs to neither Weft, the JDK nor test frameworks. */
    public static SourceLocation capture() {
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
