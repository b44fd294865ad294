package dev.weft.spi;

import dev.weft.WeftException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.ServiceLoader;
import java.util.function.Supplier;

/** The per-thread stack of interpreters; the eager one (from a backend) sits below every trace. */
public final class Interpreters {
    private static final ThreadLocal<Deque<Interpreter>> STACK = ThreadLocal.withInitial(ArrayDeque::new);

    private Interpreters() {
    }

    private static final class Eager {
        static final Interpreter INSTANCE = ServiceLoader.load(EagerInterpreterProvider.class)
                .findFirst()
                .map(EagerInterpreterProvider::eagerInterpreter)
                .orElseThrow(() -> new WeftException(SourceLocation.capture(),
                        "no Weft backend on the class path: add dev.weft:weft-backends"));
    }

    /** The innermost interpreter of this thread. */
    public static Interpreter current() {
        Interpreter top = STACK.get().peek();
        return top != null ? top : Eager.INSTANCE;
    }

    /** The eager interpreter, whatever is being traced. */
    public static Interpreter eager() {
        return Eager.INSTANCE;
    }

    /** True while {@code interp} is on this thread's stack. */
    public static boolean isActive(Interpreter interp) {
        return STACK.get().contains(interp);
    }

    /** The innermost interpreter of {@code type} on this thread's stack, or {@code null}. */
    public static <T extends Interpreter> T innermost(Class<T> type) {
        for (Interpreter i : STACK.get()) {
            if (type.isInstance(i)) {
                return type.cast(i);
            }
        }
        return null;
    }

    /** True while any tracing interpreter is on this thread's stack. */
    public static boolean isTracing() {
        return !STACK.get().isEmpty();
    }

    /**
     * Runs {@code body} one level down: with {@code top}, which must be this thread's innermost interpreter, off
     * the stack, so that what {@code body} binds goes to the interpreter below it. A transform's interpreter
     * computes its primal values so, and its rules, whose operations the levels below may transform in turn.
     */
    public static <T> T under(Interpreter top, Supplier<T> body) {
        Deque<Interpreter> stack = STACK.get();
        if (stack.peek() != top) {
            throw new IllegalStateException(top + " is not the innermost interpreter");
        }
        stack.pop();
        try {
            return body.get();
        } finally {
            stack.push(top);
        }
    }

    /** Runs {@code body} with {@code interp} innermost. */
    public static <T> T with(Interpreter interp, Supplier<T> body) {
        Deque<Interpreter> stack = STACK.get();
        stack.push(interp);
        try {
            return body.get();
        } finally {
            stack.pop();
        }
    }
}
