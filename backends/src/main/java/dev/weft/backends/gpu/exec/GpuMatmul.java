package dev.weft.backends.gpu.exec;

import dev.weft.DType;

/**
 * Batched matrix multiply on device memory, implemented over cuBLAS by the BLAS binding (through
 * {@link GpuExtension#matmul}); without one, or for a dtype it does not support, the executor runs a generated
 * tiled PTX kernel instead. Row-major: {@code C[i] = op(A[i])·op(B[i])} for {@code i < batch}, where {@code op} is
 * the transpose when the flag is set, {@code C[i]} is {@code m×n}, {@code op(A[i])} {@code m×k}, {@code op(B[i])}
 * {@code k×n}; the matrices of a batch are contiguous ({@code a} advances by {@code m·k} elements, {@code b} by
 * {@code k·n}, {@code c} by {@code m·n}). Work is enqueued on {@code stream} without host synchronisation.
 */
public interface GpuMatmul {
    /** Whether {@link #gemm} handles elements of {@code t}. */
    boolean supports(DType t);

    void gemm(GpuStream stream, DType t, boolean transA, boolean transB, int m, int n, int k, long a, long b, long c,
              int batch);
}
