package dev.weft.lowering.ir;

import java.util.List;

/**
 * The geometry of a {@code stablehlo.dot_general} in the canonical matmul form that the executors run: batch axes
 * {@code 0..B-1} on both sides, the lhs contracting its last axis and the rhs the axis after its batch axes, at
 * most one free axis per side. Row-major {@code C[i] = A[i]·B[i]} for {@code i < batch}, {@code A[i]} is
 * {@code m×k}, {@code B[i]} {@code k×n}.
 */
public record CanonicalMatmul(long batch, int m, int k, int n) {
    /** The geometry of {@code op}; an {@link IllegalArgumentException} for any other form. */
    public static CanonicalMatmul of(Op op) {
        if (!(op.attr("dot_dimension_numbers") instanceof Attr.DotDimensions dd)) {
            throw new IllegalArgumentException("missing dot_dimension_numbers");
        }
        TensorType lt = op.operand(0).tensorType(), rt = op.operand(1).tensorType();
        int batchRank = dd.lhsBatch().size(), lr = lt.shape().rank(), rr = rt.shape().rank();
        boolean canonical = dd.rhsBatch().size() == batchRank && dd.lhsContracting().equals(List.of((long) lr - 1))
                && dd.rhsContracting().equals(List.of((long) batchRank)) && lr - batchRank <= 2
                && rr - batchRank <= 2;
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
        int m = lr - batchRank == 2 ? Math.toIntExact(lt.shape().dim(lr - 2)) : 1;
        int k = Math.toIntExact(lt.shape().dim(lr - 1));
        int n = rr - batchRank == 2 ? Math.toIntExact(rt.shape().dim(rr - 1)) : 1;
        return new CanonicalMatmul(batch, m, k, n);
    }
}
