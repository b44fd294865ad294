package dev.weft.backends.gpu.blas;

import dev.weft.DType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@link DeviceGemm} on one cuBLAS handle, for {@code F32} ({@code Sgemm}) and {@code F64} ({@code Dgemm}).
 *
 * <p>cuBLAS is column-major, Weft row-major. A row-major {@code r × c} matrix is, byte for byte, the column-major
 * {@code c × r} matrix of its transpose with leading dimension {@code c}. So for row-major {@code C = A · B}
 * this asks cuBLAS for the column-major {@code Cᵀ (n × m) = Bᵀ (n × k) · Aᵀ (k × m)}, with no transposition
 * flags: {@code m' = n, n' = m, k' = k}, first operand {@code b} with {@code lda = n}, second operand {@code a}
 * with {@code ldb = k}, result {@code c} with {@code ldc = n}. Batches use the strided-batched call with strides
 * {@code k·n} (for {@code b}), {@code m·k} (for {@code a}) and {@code m·n} (for {@code c}) elements;
 * {@code alpha = 1}, {@code beta = 0}. An empty product ({@code m} or {@code n} zero) queues nothing; with
 * {@code k = 0} cuBLAS writes zeros, and {@code ldb} is raised to 1 as cuBLAS requires.
 *
 * <p>The handle is bound to the CUDA context current when this is created; calls are serialised, since a cuBLAS
 * handle must not be used by two threads at once.
 */
public final class CublasMatmul implements DeviceGemm, AutoCloseable {
    private final CublasLibrary cublas;
    private long handle;
    private long stream;

    /**
     * A handle from the first of {@code names} that loads and creates one in the current CUDA context: a
     * library whose {@code cublasCreate_v2} fails (cuBLAS newer than the driver) is skipped, not final. Fails
     * naming every library tried and why.
     */
    public static CublasMatmul open(List<String> names) {
        List<String> errors = new ArrayList<>();
        for (String name : names) {
            CublasLibrary library;
            try {
                library = new CublasLibrary(name);
            } catch (IllegalArgumentException | NoSuchElementException e) {
                errors.add(name + ": " + e.getMessage());
                continue;
            }
            try {
                return new CublasMatmul(library);
            } catch (CublasLibrary.CublasException e) {
                errors.add(name + ": " + e.getMessage());
            }
        }
        throw CublasLibrary.unusable("used", errors);
    }

    /** Creates a cuBLAS handle ({@code cublasCreate_v2}) in the current CUDA context. */
    public CublasMatmul(CublasLibrary cublas) {
        this.cublas = cublas;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = arena.allocate(JAVA_LONG);
            CublasLibrary.check(cublas.create(h), "cublasCreate_v2");
            this.handle = h.get(JAVA_LONG, 0);
        }
    }

    /** The library this handle belongs to. */
    public CublasLibrary library() {
        return cublas;
    }

    @Override
    public synchronized void gemm(long stream, DType dtype, int m, int n, int k, long a, long b, long c, int batch) {
        if (dtype != DType.F32 && dtype != DType.F64) {
            throw new IllegalArgumentException("cuBLAS gemm supports f32 and f64, not " + dtype.specName());
        }
        if (m < 0 || n < 0 || k < 0 || batch < 1) {
            throw new IllegalArgumentException("gemm dimensions m=" + m + " n=" + n + " k=" + k + " batch=" + batch);
        }
        if (handle == 0) {
            throw new IllegalStateException("cuBLAS handle was destroyed");
        }
        if (stream != this.stream) {
            CublasLibrary.check(cublas.setStream(handle, stream), "cublasSetStream_v2");
            this.stream = stream;
        }
        if (m == 0 || n == 0) {
            return;
        }
        int op = CublasLibrary.OP_N;
        int ldb = Math.max(1, k);
        try (Arena arena = Arena.ofConfined()) {
            boolean f32 = dtype == DType.F32;
            MemorySegment one = f32 ? arena.allocateFrom(JAVA_FLOAT, 1f) : arena.allocateFrom(JAVA_DOUBLE, 1d);
            MemorySegment zero = f32 ? arena.allocateFrom(JAVA_FLOAT, 0f) : arena.allocateFrom(JAVA_DOUBLE, 0d);
            if (batch == 1) {
                int status = f32
                        ? cublas.sgemm(handle, op, op, n, m, k, one, b, n, a, ldb, zero, c, n)
                        : cublas.dgemm(handle, op, op, n, m, k, one, b, n, a, ldb, zero, c, n);
                CublasLibrary.check(status, f32 ? "cublasSgemm_v2" : "cublasDgemm_v2");
            } else {
                long strideB = (long) k * n;
                long strideA = (long) m * k;
                long strideC = (long) m * n;
                int status = f32
                        ? cublas.sgemmStridedBatched(handle, op, op, n, m, k, one, b, n, strideB, a, ldb, strideA, zero,
                                c, n, strideC, batch)
                        : cublas.dgemmStridedBatched(handle, op, op, n, m, k, one, b, n, strideB, a, ldb, strideA, zero,
                                c, n, strideC, batch);
                CublasLibrary.check(status, f32 ? "cublasSgemmStridedBatched" : "cublasDgemmStridedBatched");
            }
        }
    }

    /** {@code cublasDestroy_v2}. */
    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            CublasLibrary.check(cublas.destroy(h), "cublasDestroy_v2");
        }
    }
}
