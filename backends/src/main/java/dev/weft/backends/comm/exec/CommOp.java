package dev.weft.backends.comm.exec;

/** The communication operations, by their primitive and custom-call names ({@code reduce_scatter}, ...). */
public enum CommOp {
    COMM_RANK, BARRIER, SEND, RECV, ISEND, IRECV, WAIT, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE,
    ALLTOALL, SENDRECV;

    /** The name used by primitives and in {@code weft.mpi.<name>}. */
    public String irName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The operation named {@code irName}. */
    public static CommOp of(String irName) {
        return valueOf(irName.toUpperCase(java.util.Locale.ROOT));
    }
}
