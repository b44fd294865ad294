package dev.weft.backends.gpu.exec;

import dev.weft.DType;

/**
 * Batched matrix multiply on device memory, implemented over cuBLAS (through {@link GpuExtension#matmul}); without
 * one, or for a dtype it does not support, the executor runs a generated tiled PTX kernel instead. Row-major:
 * {@code C[i] = A[i]·B[i]} for {@code i < batch}, where {@code A[i]} is {@code m×k}, {@code B[i]} {@code k×n} and
 * {@code C[i]} {@code m×n}; the matrices of a batch are contiguous ({@code a} advances by {@code m·k} elements,
 * {@code b} by {@code k·n}, {@code c} by {@code m·n}). Work is enqueued on {@code stream} without host
 * synchronisation. {@code toString} names the implementation (shown with {@code WEFT_DEBUG=1}).
 */
public interface GpuMatmul {
    /** Whether {@link #gemm} handles elements of {@code t}. */
    boolean supports(DType t);

    void gemm(GpuStream stream, DType t, int m, int n, int k, long a, long b, long c, int batch);
}
