package dev.weft.backends.gpu.blas;

import dev.weft.DType;

/**
 * Dense matrix products on device buffers, queued on a stream.
 *
 * <p>{@link #gemm} computes, for each {@code i < batch}, {@code C_i = A_i · B_i} with row-major
 * {@code A_i} ({@code m × k}), {@code B_i} ({@code k × n}) and {@code C_i} ({@code m × n}) stored one after
 * another without gaps from device addresses {@code a}, {@code b} and {@code c} (so {@code A_i} starts
 * {@code i * m * k} elements after {@code a}). {@code C} is overwritten, never accumulated into.
 */
public interface DeviceGemm {
    void gemm(long stream, DType dtype, int m, int n, int k, long a, long b, long c, int batch);
}
