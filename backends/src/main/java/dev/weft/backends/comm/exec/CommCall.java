package dev.weft.backends.comm.exec;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ReduceOp;
import dev.weft.backends.comm.Request;
import dev.weft.spi.Aval;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

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

    /**
     * Runs the operation on {@code in} (tensor operands, request ids) with {@code out} holding a buffer of the
     * right size for each tensor result, and returns the tensor results.
     */
    public List<MemorySegment> run(List<MemorySegment> in, MemorySegment[] out) {
        long start = DEBUG ? System.nanoTime() : 0;
        List<MemorySegment> results = dispatch(in, out);
        if (DEBUG) {
            System.err.printf("r%d | %s | %d items | %.6f%n", comm.rank(), op.irName(), data == null ? 0 : data.shape().size(),
                    (System.nanoTime() - start) / 1e9);
        }
        return results;
    }

    private List<MemorySegment> dispatch(List<MemorySegment> in, MemorySegment[] out) {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case COMM_RANK -> {
                out[0].set(ValueLayout.JAVA_INT, 0, comm.rank());
                yield List.of(out[0]);
            }
            case BARRIER -> {
                comm.barrier(where);
                yield List.of();
            }
            case SEND -> {
                comm.send(in.getFirst(), t, n, peer, tag, where);
                yield List.of();
            }
            case RECV -> {
                comm.recv(out[0], t, n, peer, tag, where);
                yield List.of(out[0]);
            }
            case ISEND -> List.of(RequestTable.put(comm.isend(in.getFirst(), t, n, peer, tag, where), null, out[0]));
            case IRECV -> {
                MemorySegment buf = NativeMemory.allocate(data.byteSize());
                yield List.of(RequestTable.put(comm.irecv(buf, t, n, peer, tag, where), buf, out[0]));
            }
            case WAIT -> {
                RequestTable.Pending p = RequestTable.take(in.getFirst(), where);
                comm.wait(p.request(), where);
                yield p.buffer() == null ? List.of() : List.of(p.buffer());
            }
            case ALLREDUCE -> {
                comm.allreduce(in.getFirst(), out[0], t, n, reduce, where);
                yield List.of(out[0]);
            }
            case ALLGATHER -> {
                comm.allgather(in.getFirst(), out[0], t, n, where);
                yield List.of(out[0]);
            }
            case REDUCE_SCATTER -> {
                comm.reduceScatter(in.getFirst(), out[0], t, n / comm.size(), reduce, where);
                yield List.of(out[0]);
            }
            case BCAST -> {
                out[0].copyFrom(in.getFirst().asSlice(0, data.byteSize()));
                comm.bcast(out[0], t, n, root, where);
                yield List.of(out[0]);
            }
            case REDUCE -> {
                comm.reduce(in.getFirst(), comm.rank() == root ? out[0] : null, t, n, reduce, root, where);
                if (comm.rank() != root) {
                    out[0].copyFrom(in.getFirst().asSlice(0, data.byteSize()));
                }
                yield List.of(out[0]);
            }
            case ALLTOALL -> {
                comm.alltoall(in.getFirst(), out[0], t, n / comm.size(), where);
                yield List.of(out[0]);
            }
            case SENDRECV -> {
                comm.sendrecv(in.getFirst(), t, n, peer, tag, out[0], received.shape().size(), source, recvTag,
                        where);
                yield List.of(out[0]);
            }
        };
    }
}
