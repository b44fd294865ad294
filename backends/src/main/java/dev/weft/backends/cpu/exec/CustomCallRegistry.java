package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handlers of {@code stablehlo.custom_call} by {@code call_target_name} (such as {@code "weft.mpi.allreduce"}).
 * An executable looks up its handlers when it is built, so handlers must be registered before.
 */
public final class CustomCallRegistry {
    /** Stands for a {@code !stablehlo.token} among custom-call operands and results. */
    public static final MemorySegment TOKEN = MemorySegment.NULL;

    private static final List<CpuCustomCallProvider> PROVIDERS = ServiceLoader.load(CpuCustomCallProvider.class)
            .stream().map(ServiceLoader.Provider::get).toList();

    private final Map<String, CustomCallHandler> handlers = new ConcurrentHashMap<>();

    /** The handlers every {@link CpuCustomCallProvider} has for {@code module}, on the communicators of {@code comms}. */
    public static CustomCallRegistry of(Module module, CommBindings comms) {
        CustomCallRegistry r = new CustomCallRegistry();
        for (CpuCustomCallProvider p : PROVIDERS) {
            p.register(module, comms, r);
        }
        return r;
    }

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
