package dev.weft.backends.comm.exec;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One communication operation, fully resolved: the shared implementation behind eager {@code Comm} calls and the
 * executor's {@code weft.mpi.*} custom calls. Buffers are row-major; results are written into the caller's
 * {@code out} buffers, except that a completed receive returns the buffer its {@code irecv} posted. With
 * {@code WEFT_DEBUG=1} every call is logged to stderr as {@code r<rank> | <op> | <count> items | <seconds>}.
 *
 * @param op       the operation
 * @param data     dtype and shape of the data moved (the operand, or what is received); null for barrier/rank
 * @param received what {@code sendrecv} receives; null for other ops
 */
public record CommCall(CommOp op, Communicator comm, int peer, int tag, int source, int recvTag, ReduceOp reduce,
                       int root, Aval data, Aval received, SourceLocation where) {
    private static final boolean DEBUG = "1".equals(System.getenv("WEFT_DEBUG"));

    /** A communication operation bound to its arguments, taking tensor operands and filling results. */
    @FunctionalInterface
    public interface Action {
        /**
         * Runs the operation on {@code in} (tensor operands, request ids; entries past those are ignored).
         * {@code out} holds, for each tensor result, a buffer of the right size, which the operation fills or
         * replaces (a completed receive's own buffer).
         */
        void run(MemorySegment[] in, MemorySegment[] out);
    }

    /** Runs the operation once; see {@link Action#run}. */
    public void run(MemorySegment[] in, MemorySegment[] out) {
        action().run(in, out);
    }

    /**
     * This call as an {@link Action}, the operation chosen once: a compiled program keeps it, so that each run is
     * one small call that inlines (a switch over every operation at each call would be too big to).
     */
    public Action action() {
        Communicator.BufferPairCall pair = selectPair();
        Action a = pair != null ? arrays(pair) : select();
        if (!DEBUG) {
            return a;
        }
        return (in, out) -> {
            long start = System.nanoTime();
            a.run(in, out);
            // One write per line: under mpirun, the pieces of a printf interleave with other ranks' lines.
            System.err.print(String.format("r%d | %s | %d items | %.6f%n", comm.rank(), op.irName(),
                    data == null ? 0 : data.shape().size(), (System.nanoTime() - start) / 1e9));
        };
    }

    /** {@code pair} as an {@link Action} on the first operand and the first result. */
    public static Action arrays(Communicator.BufferPairCall pair) {
        return (in, out) -> pair.accept(in[0], out[0]);
    }

    /**
     * This call as a direct call on its one input buffer and its output buffer, which it fills (never replaces),
     * when its operation is one such (a collective or {@code sendrecv}); else null, and also with
     * {@code WEFT_DEBUG=1}, which logs through {@link #action} only.
     */
    public Communicator.BufferPairCall pairAction() {
        return DEBUG ? null : selectPair();
    }

    private Communicator.BufferPairCall selectPair() {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case ALLREDUCE -> comm.bindAllreduce(t, n, reduce, where);
            case ALLGATHER -> (in, out) -> comm.allgather(in, out, t, n, where);
            case REDUCE_SCATTER -> (in, out) -> comm.reduceScatter(in, out, t, n / comm.size(), reduce, where);
            case BCAST -> (in, out) -> {
                out.copyFrom(in.asSlice(0, data.byteSize()));
                comm.bcast(out, t, n, root, where);
            };
            case REDUCE -> (in, out) -> {
                comm.reduce(in, comm.rank() == root ? out : null, t, n, reduce, root, where);
                if (comm.rank() != root) {
                    out.copyFrom(in.asSlice(0, data.byteSize()));
                }
            };
            case ALLTOALL -> (in, out) -> comm.alltoall(in, out, t, n / comm.size(), where);
            case SENDRECV -> (in, out) -> comm.sendrecv(in, t, n, peer, tag, out, received.shape().size(), source,
                    recvTag, where);
            case COMM_RANK, BARRIER, SEND, RECV, ISEND, IRECV, WAIT -> null;
        };
    }

    /** The operations that are not a {@link #selectPair}. */
    private Action select() {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case COMM_RANK -> (in, out) -> out[0].set(ValueLayout.JAVA_INT, 0, comm.rank());
            case BARRIER -> (in, out) -> comm.barrier(where);
            case SEND -> (in, out) -> comm.send(in[0], t, n, peer, tag, where);
            case RECV -> (in, out) -> comm.recv(out[0], t, n, peer, tag, where);
            case ISEND -> (in, out) -> out[0] = RequestTable.put(comm.isend(in[0], t, n, peer, tag, where), null,
                    out[0]);
            case IRECV -> (in, out) -> {
                MemorySegment buf = NativeMemory.allocate(data.byteSize());
                out[0] = RequestTable.put(comm.irecv(buf, t, n, peer, tag, where), buf, out[0]);
            };
            case WAIT -> (in, out) -> {
                RequestTable.Pending p = RequestTable.take(in[0], where);
                comm.wait(p.request(), where);
                if (p.buffer() != null) {
                    out[0] = p.buffer();
                }
            };
            case ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE, ALLTOALL, SENDRECV ->
                    throw new IllegalStateException(op + " is a pair action");
        };
    }
}
