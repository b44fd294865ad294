package dev.weft.backends.gpu.exec;

import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import java.util.Map;
import java.util.Optional;

/**
 * A library the GPU executor can use, found with {@link java.util.ServiceLoader} (NCCL, cuBLAS). Both methods are
 * called once per executable, on the executor's thread with its CUDA context current.
 */
public interface GpuExtension {
    /**
     * Handlers by {@code call_target_name} for the custom calls of {@code module} that this extension runs, using
     * the executable's {@code resources} and, for communication, the communicators {@code comms} binds; none when
     * the module has no such call. Fails, naming the op's source line, when the module needs this extension's
     * library and it cannot be loaded.
     */
    default Map<String, GpuCustomCallHandler> customCalls(Module module, CommBindings comms,
                                                          GpuResources resources) {
        return Map.of();
    }

    /** A matrix multiply bound to the current context; nothing when this extension's library is not loadable. */
    default Optional<GpuMatmul> matmul(GpuStream stream) {
        return Optional.empty();
    }

    /**
     * Queues whatever this extension's custom calls left batched (an open NCCL group). A handler may batch: its
     * work is then queued only at the next flush, and until then the executor neither reuses a buffer those calls
     * touched nor queues work that reads one of their results. The executor flushes before such work, before
     * reading from the device, after each iteration of a {@code while} or {@code Weft.fori} loop and at the end of
     * each run, on the thread that made the calls.
     */
    default void flush() {
    }
}
