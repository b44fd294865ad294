package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import dev.weft.backends.cpu.blas.OpenBlas;
import dev.weft.spi.CoreShare;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.stream.IntStream;

/**
 * Batched matrix product {@code out[b] = lhs[b] (m x k) * rhs[b] (k x n)}, row-major, the canonical form of
 * {@code dot_general} (batch axes leading, lhs contracting its last axis, rhs its first non-batch axis; a rank-1
 * side is a matrix with {@code m} or {@code n} equal to 1). Loops run i-k-j so the innermost loop streams a row
 * of {@code rhs} into a row of {@code out} (vectorizable), blocked over k and j to stay in cache; large products
 * split their rows over the common fork-join pool. The innermost index is a {@code long} so that C2 vectorizes
 * the segment accesses. Integer products wrap. F32 and F64 products run on OpenBLAS instead when it is
 * installed ({@link OpenBlas}), one {@code gemm} per batch. A side stored transposed ({@code fold-transposes})
 * goes to {@code gemm} as a transposed operand; the Java kernel transposes it into a scratch copy first.
 */
public final class DotGeneral {
    private static final int K_BLOCK = 128;
    private static final int J_BLOCK = 512;
    private static final long PARALLEL_WORK = 1L << 21;
    private static final int MIN_ROWS_PER_TASK = 8;

    private DotGeneral() {
    }

    /** Overwrites {@code out} ({@code batch x m x n}) with the products. */
    public static void matmul(DType t, MemorySegment lhs, MemorySegment rhs, MemorySegment out, long batch, int m,
                              int k, int n) {
        matmul(t, lhs, rhs, out, batch, m, k, n, false, false);
    }

    /**
     * Overwrites {@code out} ({@code batch x m x n}) with the products, {@code lhs} stored as {@code k x m} per
     * batch if {@code transA}, {@code rhs} as {@code n x k} if {@code transB}.
     */
    public static void matmul(DType t, MemorySegment lhs, MemorySegment rhs, MemorySegment out, long batch, int m,
                              int k, int n, boolean transA, boolean transB) {
        for (long b = 0; b < batch; b++) {
            long es = t.byteSize();
            MemorySegment as = lhs.asSlice(b * m * k * es, (long) m * k * es);
            MemorySegment bs = rhs.asSlice(b * k * n * es, (long) k * n * es);
            MemorySegment c = out.asSlice(b * m * n * es, (long) m * n * es);
            if (OpenBlas.isAvailable(t)) {
                OpenBlas.gemm(t, as, bs, c, m, k, n, transA, transB);
                continue;
            }
            MemorySegment a = transA ? transposed(t, as, k, m) : as;
            MemorySegment bm = transB ? transposed(t, bs, n, k) : bs;
            c.fill((byte) 0);
            long work = (long) m * k * n;
            int tasks = work < PARALLEL_WORK || CoreShare.CORES < 2 ? 1
                    : Math.min(CoreShare.CORES * 4, Math.max(1, m / MIN_ROWS_PER_TASK));
            if (tasks == 1) {
                rows(t, a, bm, c, 0, m, k, n);
            } else {
                IntStream.range(0, tasks).parallel().forEach(task -> rows(t, a, bm, c,
                        (int) ((long) m * task / tasks), (int) ((long) m * (task + 1) / tasks), k, n));
            }
        }
    }

    /** A row-major {@code cols x rows} copy of the row-major {@code rows x cols} matrix {@code s}. */
    private static MemorySegment transposed(DType t, MemorySegment s, int rows, int cols) {
        MemorySegment out = Arena.ofAuto().allocate(s.byteSize(), 64);
        DataMovement.transpose(t, s, new long[] {rows, cols}, new int[] {1, 0}, out);
        return out;
    }

    private static void rows(DType t, MemorySegment a, MemorySegment b, MemorySegment c, int i0, int i1, int k,
                             int n) {
        for (int kk = 0; kk < k; kk += K_BLOCK) {
            int k1 = Math.min(k, kk + K_BLOCK);
            for (int jj = 0; jj < n; jj += J_BLOCK) {
                int j1 = Math.min(n, jj + J_BLOCK);
                switch (t) {
                    case F32 -> blockF32(a, b, c, i0, i1, kk, k1, jj, j1, k, n);
                    case F64 -> blockF64(a, b, c, i0, i1, kk, k1, jj, j1, k, n);
                    case I32 -> blockI32(a, b, c, i0, i1, kk, k1, jj, j1, k, n);
                    case I64 -> blockI64(a, b, c, i0, i1, kk, k1, jj, j1, k, n);
                    case BOOL -> throw new IllegalArgumentException("matmul is not defined on bool");
                }
            }
        }
    }

    private static void blockF32(MemorySegment a, MemorySegment b, MemorySegment c, int i0, int i1, int k0, int k1,
                                 int j0, int j1, int k, int n) {
        for (int i = i0; i < i1; i++) {
            long ci = (long) i * n;
            for (int p = k0; p < k1; p++) {
                float aip = a.getAtIndex(F32, (long) i * k + p);
                long bp = (long) p * n;
                for (long j = j0; j < j1; j++) {
                    c.setAtIndex(F32, ci + j, c.getAtIndex(F32, ci + j) + aip * b.getAtIndex(F32, bp + j));
                }
            }
        }
    }

    private static void blockF64(MemorySegment a, MemorySegment b, MemorySegment c, int i0, int i1, int k0, int k1,
                                 int j0, int j1, int k, int n) {
        for (int i = i0; i < i1; i++) {
            long ci = (long) i * n;
            for (int p = k0; p < k1; p++) {
                double aip = a.getAtIndex(F64, (long) i * k + p);
                long bp = (long) p * n;
                for (long j = j0; j < j1; j++) {
                    c.setAtIndex(F64, ci + j, c.getAtIndex(F64, ci + j) + aip * b.getAtIndex(F64, bp + j));
                }
            }
        }
    }

    private static void blockI32(MemorySegment a, MemorySegment b, MemorySegment c, int i0, int i1, int k0, int k1,
                                 int j0, int j1, int k, int n) {
        for (int i = i0; i < i1; i++) {
            long ci = (long) i * n;
            for (int p = k0; p < k1; p++) {
                int aip = a.getAtIndex(I32, (long) i * k + p);
                long bp = (long) p * n;
                for (long j = j0; j < j1; j++) {
                    c.setAtIndex(I32, ci + j, c.getAtIndex(I32, ci + j) + aip * b.getAtIndex(I32, bp + j));
                }
            }
        }
    }

    private static void blockI64(MemorySegment a, MemorySegment b, MemorySegment c, int i0, int i1, int k0, int k1,
                                 int j0, int j1, int k, int n) {
        for (int i = i0; i < i1; i++) {
            long ci = (long) i * n;
            for (int p = k0; p < k1; p++) {
                long aip = a.getAtIndex(I64, (long) i * k + p);
                long bp = (long) p * n;
                for (long j = j0; j < j1; j++) {
                    c.setAtIndex(I64, ci + j, c.getAtIndex(I64, ci + j) + aip * b.getAtIndex(I64, bp + j));
                }
            }
        }
    }
}
