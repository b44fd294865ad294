package dev.weft.backends.gpu.exec;

import dev.weft.lowering.ir.Module;
import java.util.Map;
import java.util.Optional;

/**
 * A library the GPU executor can use, found with {@link java.util.ServiceLoader} (NCCL, cuBLAS). Both methods are
 * called once per executable, on the executor's thread with its CUDA context current; a method returns nothing
 * when its library is not loadable here.
 */
public interface GpuExtension {
    /** Handlers by {@code call_target_name} for the custom calls of {@code module}. */
    default Map<String, GpuCustomCallHandler> customCalls(Module module, GpuStream stream) {
        return Map.of();
    }

    /** A matrix multiply bound to the current context. */
    default Optional<GpuMatmul> matmul(GpuStream stream) {
        return Optional.empty();
    }
}
