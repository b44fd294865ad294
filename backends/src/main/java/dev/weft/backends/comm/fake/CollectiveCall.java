package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.prim.CommPrims;
import dev.weft.spi.SourceLocation;

import java.util.Objects;

/**
 * What one rank called as its n-th collective on a communicator; every rank's call must agree on everything but
 * {@code where}. Unused fields are null ({@code dtype}, {@code reduceOp}) or -1 ({@code count}, {@code root}).
 */
record CollectiveCall(Kind kind, DType dtype, long count, int root, String reduceOp, SourceLocation where) {
    /** The collectives a fake communicator runs, labelled as their primitives are named ({@code reduce_scatter}). */
    enum Kind {
        BARRIER(CommPrims.BARRIER.name()), BCAST(CommPrims.BCAST.name()), REDUCE(CommPrims.REDUCE.name()),
        ALLREDUCE(CommPrims.ALLREDUCE.name()), ALLGATHER(CommPrims.ALLGATHER.name()),
        REDUCE_SCATTER(CommPrims.REDUCE_SCATTER.name()), ALLTOALL(CommPrims.ALLTOALL.name()), SPLIT("split"),
        DUP("dup");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    static CollectiveCall of(Kind kind, SourceLocation where) {
        return new CollectiveCall(kind, null, -1, -1, null, where);
    }

    boolean agreesWith(CollectiveCall o) {
        return kind == o.kind && dtype == o.dtype && count == o.count && root == o.root
                && Objects.equals(reduceOp, o.reduceOp);
    }

    /** Like {@code allreduce(SUM, 4 x f32)}, {@code bcast(root 0, 7 x i64)} or {@code barrier}; counts are per rank. */
    @Override
    public String toString() {
        StringBuilder args = new StringBuilder();
        if (reduceOp != null) {
            args.append(reduceOp);
        }
        if (root >= 0) {
            args.append(args.isEmpty() ? "" : ", ").append("root ").append(root);
        }
        if (dtype != null) {
            args.append(args.isEmpty() ? "" : ", ").append(count).append(" x ").append(dtype.specName());
        }
        return args.isEmpty() ? kind.label : kind.label + "(" + args + ")";
    }
}
