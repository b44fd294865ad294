package dev.weft.backends.gpu.exec.ext;

import dev.weft.spi.Setting;
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
 * every executable in it. The handle comes from the first of {@link CublasLibrary#candidates} that loads and
 * creates one ({@link CublasMatmul#open}): cuBLAS 13 installed beside 12 on a CUDA 12 driver falls back to 12.
 * When none does, this offers no matmul and the executor runs its PTX GEMM kernel; {@code WEFT_DEBUG=1} prints
 * why to stderr.
 */
public final class CublasGpuExtension implements GpuExtension {
    private static final boolean DEBUG = Setting.DEBUG.on();
    private static final Map<Long, Optional<GpuMatmul>> BY_CONTEXT = new ConcurrentHashMap<>();

    /** Whether any cuBLAS library loads, found once per process. */
    private static final class Installed {
        static final boolean ANY = check();

        private static boolean check() {
            try {
                CublasLibrary.load();
                return true;
            } catch (IllegalStateException e) {
                debug(e.getMessage());
                return false;
            }
        }
    }

    @Override
    public Optional<GpuMatmul> matmul(GpuStream stream) {
        if (!Installed.ANY) {
            return Optional.empty();
        }
        CUcontext context = new CUcontext();
        JCudaDriver.cuCtxGetCurrent(context);
        return BY_CONTEXT.computeIfAbsent(CudaHandles.raw(context), c -> {
            try {
                CublasMatmul cublas = CublasMatmul.open(CublasLibrary.candidates());
                return Optional.of(new CublasGpuMatmul(cublas, cublas.library()));
            } catch (IllegalStateException e) {
                debug(e.getMessage());
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
