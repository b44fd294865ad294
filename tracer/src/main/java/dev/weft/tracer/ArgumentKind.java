package dev.weft.tracer;

/**
 * A kind of non-tensor argument accepted by {@code @Compile} methods, found with {@link java.util.ServiceLoader}
 * (after the built-in compile-time constants: primitives, boxed primitives, {@code String}, enums). Such an
 * argument is part of the compile-cache key and is passed to the body while it is traced; it is not a graph
 * input. The communication layer registers one for communicators.
 */
public interface ArgumentKind {
    /** Whether arguments of the run-time class {@code type} are of this kind. */
    boolean accepts(Class<?> type);

    /**
     * What {@code value} contributes to the compile-cache key: calls whose keys are equal share one executable.
     * Called on every call, so it should be cheap.
     */
    Object key(Object value);

    /** The value the body receives in place of {@code value} while it is traced; by default {@code value}. */
    default Object traceValue(Object value) {
        return value;
    }

    /** Names the accepted arguments in error messages, like {@code "communicators (Comm)"}. */
    String description();
}
