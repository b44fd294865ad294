package dev.weft.backends.gpu.exec.ext;

import dev.weft.backends.gpu.blas.CublasLibrary;
import dev.weft.backends.gpu.blas.CublasMatmul;
import dev.weft.backends.gpu.exec.CudaHandles;
import dev.weft.backends.gpu.exec.GpuExtension;
import dev.weft.backends.gpu.exec.GpuMatmul;
import dev.weft.backends.gpu.exec.GpuStream;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import jcuda.driver.CUcontext;
import jcuda.driver.JCudaDriver;

/**
 * Matmuls through cuBLAS ({@link CublasMatmul}) for f32 and f64, with one cuBLAS handle per CUDA context shared by
 * every executable in it. The library is found once per process by {@link CublasLibrary#load}'s rules. When it
 * cannot be loaded, or a handle cannot be created, this offers no matmul and the executor runs its PTX GEMM
 * kernel; {@code WEFT_DEBUG=1} prints why to stderr.
 */
public final class CublasGpuExtension implements GpuExtension {
    private static final boolean DEBUG = "1".equals(System.getenv("WEFT_DEBUG"));
    private static final Map<Long, Optional<GpuMatmul>> BY_CONTEXT = new ConcurrentHashMap<>();

    /** The library, loaded on first use; null when it cannot be loaded. */
    private static final class Library {
        static final CublasLibrary LOADED = load();

        private static CublasLibrary load() {
            try {
                return CublasLibrary.load();
            } catch (IllegalStateException e) {
                debug(e.getMessage());
                return null;
            }
        }
    }

    @Override
    public Optional<GpuMatmul> matmul(GpuStream stream) {
        CublasLibrary cublas = Library.LOADED;
        if (cublas == null) {
            return Optional.empty();
        }
        CUcontext context = new CUcontext();
        JCudaDriver.cuCtxGetCurrent(context);
        return BY_CONTEXT.computeIfAbsent(CudaHandles.raw(context), c -> {
            try {
                return Optional.of(new CublasGpuMatmul(new CublasMatmul(cublas), cublas));
            } catch (CublasLibrary.CublasException e) {
                debug(cublas + ": " + e.getMessage());
                return Optional.empty();
            }
        });
    }

    private static void debug(String reason) {
        if (DEBUG) {
            System.err.println("cuBLAS not used (" + reason + "); matmuls run the PTX GEMM kernel");
        }
    }
}
