package dev.weft.tracer;

import dev.weft.Trees;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;

/**
 * Counts a method's compiles and says once, on stderr, when it has compiled more than {@value #LIMIT} times, naming
 * the argument whose change caused the last one (JAX's cache-miss explanation): a number, a string or a shape that
 * changes every call makes a program per call; pass it as a tensor, or make it a constant of fewer values.
 */
final class Recompiles {
    static final int LIMIT = 8;

    /** Per world bound to the compiling thread (each fake rank compiles its own programs): the count, last keys. */
    private final Map<Object, int[]> counts = new WeakHashMap<>();
    private final Map<Object, List<Object>> lastKeys = new WeakHashMap<>();
    private boolean warned;

    /**
     * Notes a compile of {@code method} by {@code world}'s rank for argument keys {@code keys} (a traced scalar's
     * key being its value), from {@code where}; {@code diverged} is where the program traced for new traced-scalar
     * values first differs from the last one, when that caused the compile.
     */
    synchronized void compiled(InterceptedMethod method, Object world, List<Object> keys, SourceLocation where,
                               Optional<SourceLocation> diverged) {
        Object who = world != null ? world : this;
        int compiles = ++counts.computeIfAbsent(who, w -> new int[1])[0];
        List<Object> previous = lastKeys.put(who, keys);
        if (compiles <= LIMIT || warned || previous == null) {
            return;
        }
        warned = true;
        String[] names = java.util.Arrays.stream(method.method().getParameters()).map(p -> p.getName())
                .toArray(String[]::new);
        StringBuilder why = new StringBuilder();
        for (int i = 0; i < keys.size() && i < previous.size(); i++) {
            if (!keys.get(i).equals(previous.get(i))) {
                why.append(why.isEmpty() ? "" : ", ").append("argument ").append(i)
                        .append(i < names.length && !names[i].startsWith("arg") ? " (" + names[i] + ")" : "")
                        .append(" changed from ").append(describe(previous.get(i))).append(" to ")
                        .append(describe(keys.get(i)));
            }
        }
        String advice = diverged.isPresent()
                ? " and the program traced for it differs" + (diverged.get().isUnknown() ? "" : " at "
                + diverged.get()) + ". A double or float argument serves one program only where it reaches Weft's"
                + " operations as itself (x.mul(lr)), not through host arithmetic (lr * 2) or a branch on its value;"
                + " compute with it as a tensor (Tensor.scalar), or mark it @Static if each value is meant to"
                + " compile."
                : ". A number or string argument is a compile-time constant: pass a value that changes every call"
                + " as a tensor (Tensor.scalar), or mark it so by design.";
        System.err.println("weft: " + (where.isUnknown() ? "" : where + ": ") + method + " has been compiled "
                + compiles + " times; the last time because " + (why.isEmpty() ? "the receiver or ranks changed"
                : why) + advice);
    }

    private static String describe(Object key) {
        return key instanceof TreeArgument t ? Trees.describe(t.structure()) + " " + t.leaves() : String.valueOf(key);
    }
}
