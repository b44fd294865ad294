package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What one rank called as its n-th collective on a communicator, of a {@linkplain CommOp.Kind#collective collective}
 * kind; every rank's call must agree on everything but {@code where}. Unused fields are null ({@code dtype},
 * {@code reduceOp}, {@code counts}) or -1 ({@code count}, {@code root}).
 *
 * @param counts the elements per rank of a variable-count collective
 */
record CollectiveCall(CommOp.Kind kind, DType dtype, long count, int root, String reduceOp, List<Long> counts,
                      SourceLocation where) {
    CollectiveCall {
        if (!kind.collective()) {
            throw new IllegalArgumentException(kind + " is not a collective");
        }
    }

    /** A call of fixed counts. */
    CollectiveCall(CommOp.Kind kind, DType dtype, long count, int root, String reduceOp, SourceLocation where) {
        this(kind, dtype, count, root, reduceOp, null, where);
    }

    /** A variable-count call: {@code counts[r]} elements from (or to) rank {@code r}. */
    static CollectiveCall counted(CommOp.Kind kind, DType dtype, long[] counts, int root, SourceLocation where) {
        return new CollectiveCall(kind, dtype, -1, root, null, Arrays.stream(counts).boxed().toList(), where);
    }

    /** The offset, in elements, of rank {@code r}'s block of a variable-count call. */
    long offset(int r) {
        long o = 0;
        for (int i = 0; i < r; i++) {
            o += counts.get(i);
        }
        return o;
    }

    static CollectiveCall of(CommOp.Kind kind, SourceLocation where) {
        return new CollectiveCall(kind, null, -1, -1, null, where);
    }

    boolean agreesWith(CollectiveCall o) {
        return kind == o.kind && dtype == o.dtype && count == o.count && root == o.root
                && Objects.equals(reduceOp, o.reduceOp) && Objects.equals(counts, o.counts);
    }

    /**
     * Like {@code allreduce(SUM, 4 x f32)}, {@code bcast(root 0, 7 x i64)}, {@code alltoallv(f32)} or
     * {@code barrier}; counts are per rank.
     */
    @Override
    public String toString() {
        StringBuilder args = new StringBuilder();
        if (reduceOp != null) {
            args.append(reduceOp);
        }
        if (root >= 0) {
            args.append(args.isEmpty() ? "" : ", ").append("root ").append(root);
        }
        if (counts != null) {
            args.append(args.isEmpty() ? "" : ", ").append(counts).append(" x ").append(dtype.specName());
        } else if (dtype != null) {
            // alltoallv's counts differ by rank and are checked pairwise, so its call carries none
            args.append(args.isEmpty() ? "" : ", ").append(count >= 0 ? count + " x " : "").append(dtype.specName());
        }
        return args.isEmpty() ? kind.label() : kind.label() + "(" + args + ")";
    }
}
