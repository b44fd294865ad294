package dev.weft.spi;

import java.util.Set;

/** A place in the user's source: the first stack frame outside Weft's own packages. */
public record SourceLocation(String className, String method, String file, int line) {
    public static final SourceLocation UNKNOWN = new SourceLocation("?", "?", "<unknown>", -1);

    private static final StackWalker WALKER = StackWalker.getInstance();
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
                .map(f -> new SourceLocation(f.getClassName(), f.getMethodName(),
                        f.getFileName() == null ? "<unknown>" : f.getFileName(), f.getLineNumber()))
                .orElse(UNKNOWN));
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
