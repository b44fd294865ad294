package dev.weft.backends.cpu.exec;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handlers of {@code stablehlo.custom_call} by {@code call_target_name} (such as {@code "weft.mpi.allreduce"}).
 * An executable looks up its handlers when it is built, so handlers must be registered before.
 */
public final class CustomCallRegistry {
    /** Stands for a {@code !stablehlo.token} among custom-call operands and results. */
    public static final MemorySegment TOKEN = MemorySegment.NULL;

    private final Map<String, CustomCallHandler> handlers = new ConcurrentHashMap<>();

    /** Makes {@code handler} run custom calls to {@code target}, replacing any earlier one; returns this. */
    public CustomCallRegistry register(String target, CustomCallHandler handler) {
        handlers.put(target, handler);
        return this;
    }

    public Optional<CustomCallHandler> handler(String target) {
        return Optional.ofNullable(handlers.get(target));
    }

    public Set<String> targets() {
        return Set.copyOf(handlers.keySet());
    }
}
