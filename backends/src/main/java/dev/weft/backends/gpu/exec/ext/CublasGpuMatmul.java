package dev.weft.backends.gpu.exec.ext;

import dev.weft.DType;
import dev.weft.backends.gpu.blas.CublasLibrary;
import dev.weft.backends.gpu.blas.CublasMatmul;
import dev.weft.backends.gpu.exec.GpuMatmul;
import dev.weft.backends.gpu.exec.GpuStream;

/** The executor's {@link GpuMatmul} on a {@link CublasMatmul}: f32 and f64 on the caller's stream. */
final class CublasGpuMatmul implements GpuMatmul {
    private final CublasMatmul cublas;
    private final CublasLibrary library;

    CublasGpuMatmul(CublasMatmul cublas, CublasLibrary library) {
        this.cublas = cublas;
        this.library = library;
    }

    @Override
    public boolean supports(DType t) {
        return t == DType.F32 || t == DType.F64;
    }

    @Override
    public void gemm(GpuStream stream, DType t, int m, int n, int k, long a, long b, long c, int batch) {
        cublas.gemm(stream.handle(), t, m, n, k, a, b, c, batch);
    }

    @Override
    public String toString() {
        return "cuBLAS (" + library + ")";
    }
}
