package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.spi.CommHandle;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * The tensors marked by {@link Comm#replicated}: for each, the communicators over whose ranks it is the same (held
 * weakly: a mark lives as long as its tensor). Autodiff reads them to type a function's inputs across ranks.
 */
public final class Replicas {
    private static final Map<Tensor, Set<CommHandle>> MARKS = Collections.synchronizedMap(new WeakHashMap<>());

    private Replicas() {
    }

    static void mark(Tensor t, CommHandle comm) {
        MARKS.compute(t, (k, s) -> {
            Set<CommHandle> out = s == null ? new LinkedHashSet<>() : new LinkedHashSet<>(s);
            out.add(comm);
            return Collections.unmodifiableSet(out);
        });
    }

    /** The communicators {@code t} was marked replicated over, in the order marked; empty if none. */
    public static Set<CommHandle> over(Tensor t) {
        Set<CommHandle> s = MARKS.get(t);
        return s == null ? Set.of() : s;
    }
}
