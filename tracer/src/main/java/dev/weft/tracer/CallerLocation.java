package dev.weft.tracer;

import dev.weft.spi.SourceLocation;

/** The source line that called a given method, for errors about the call itself (its arguments). */
final class CallerLocation {
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    private CallerLocation() {
    }

    /**
     * The frame just below the innermost frame of {@code type.method}, skipping reflection frames; the user's
     * innermost frame ({@link SourceLocation#capture()}) if that method is not on the stack.
     */
    static SourceLocation of(Class<?> type, String method) {
        return WALKER.walk(frames -> frames
                .dropWhile(f -> f.getDeclaringClass() != type || !f.getMethodName().equals(method))
                .skip(1)
                .filter(f -> !isReflection(f.getClassName()))
                .findFirst()
                .map(SourceLocation::of))
                .orElseGet(SourceLocation::capture);
    }

    private static boolean isReflection(String className) {
        return className.startsWith("java.lang.invoke.") || className.startsWith("jdk.internal.reflect.")
                || className.startsWith("java.lang.reflect.");
    }
}
