package dev.weft.lowering.ir;

import java.util.List;

/**
 * The geometry of a {@code stablehlo.dot_general} in the matmul form that the executors run: batch axes
 * {@code 0..B-1} on both sides, at most one free axis per side, the lhs contracting its last axis and the rhs the
 * axis after its batch axes, or, for a side with a free axis, the other one of its two ({@code transA},
 * {@code transB}: BLAS's transposed operands, which {@code fold-transposes} makes). Row-major
 * {@code C[i] = op(A[i])·op(B[i])} for {@code i < batch}, {@code op(A[i])} being {@code m×k} and {@code op(B[i])}
 * {@code k×n}; a transposed side is stored as the transpose of that.
 */
public record CanonicalMatmul(long batch, int m, int k, int n, boolean transA, boolean transB) {
    /** The geometry of {@code op}; an {@link IllegalArgumentException} for any other form. */
    public static CanonicalMatmul of(Op op) {
        if (!(op.attr("dot_dimension_numbers") instanceof Attr.DotDimensions dd)) {
            throw new IllegalArgumentException("missing dot_dimension_numbers");
        }
        TensorType lt = op.operand(0).tensorType(), rt = op.operand(1).tensorType();
        int batchRank = dd.lhsBatch().size(), lr = lt.shape().rank(), rr = rt.shape().rank();
        boolean lhsMatrix = lr - batchRank == 2, rhsMatrix = rr - batchRank == 2;
        boolean transA = lhsMatrix && dd.lhsContracting().equals(List.of((long) batchRank));
        boolean transB = rhsMatrix && dd.rhsContracting().equals(List.of((long) batchRank + 1));
        boolean canonical = dd.rhsBatch().size() == batchRank && lr - batchRank <= 2 && rr - batchRank <= 2
                && (transA || dd.lhsContracting().equals(List.of((long) lr - 1)))
                && (transB || dd.rhsContracting().equals(List.of((long) batchRank)));
        for (int i = 0; i < batchRank && canonical; i++) {
            canonical = dd.lhsBatch().get(i) == i && dd.rhsBatch().get(i) == i;
        }
        if (!canonical) {
            throw new IllegalArgumentException("only the canonical matmul form of dot_general is supported, got "
                    + dd.mlir());
        }
        long batch = 1;
        for (int i = 0; i < batchRank; i++) {
            batch *= lt.shape().dim(i);
        }
        int m = lhsMatrix ? Math.toIntExact(lt.shape().dim(transA ? lr - 1 : lr - 2)) : 1;
        int k = Math.toIntExact(lt.shape().dim(transA ? lr - 2 : lr - 1));
        int n = rhsMatrix ? Math.toIntExact(rt.shape().dim(transB ? rr - 2 : rr - 1)) : 1;
        return new CanonicalMatmul(batch, m, k, n, transA, transB);
    }

    /** Whether either side is stored transposed. */
    public boolean transposed() {
        return transA || transB;
    }
}
