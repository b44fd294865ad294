package dev.weft.backends.comm.exec;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ReduceOp;
import dev.weft.backends.comm.Request;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * One communication operation, fully resolved: the shared implementation behind eager {@code Comm} calls and the
 * executor's {@code weft.mpi.*} custom calls. Buffers are row-major; results are fresh buffers (a completed
 * receive returns the buffer its {@code irecv} posted). With {@code WEFT_DEBUG=1} every call is logged to stderr
 * as {@code r<rank> | <op> | <count> items | <seconds>}.
 *
 * @param op     the primitive's name ({@code allreduce}, {@code isend}, ...)
 * @param data   dtype and shape of the data moved (the operand, or what is received); null for barrier/rank
 */
public record CommCall(String op, Communicator comm, int peer, int tag, int source, int recvTag, ReduceOp reduce,
                       int root, Aval data, SourceLocation where) {
    private static final boolean DEBUG = "1".equals(System.getenv("WEFT_DEBUG"));

    /** Runs the operation on {@code in} (tensor operands, request ids) and returns the tensor results. */
    public List<MemorySegment> run(List<MemorySegment> in) {
        long start = DEBUG ? System.nanoTime() : 0;
        List<MemorySegment> out = dispatch(in);
        if (DEBUG) {
            System.err.printf("r%d | %s | %d items | %.6f%n", comm.rank(), op, data == null ? 0 : data.shape().size(),
                    (System.nanoTime() - start) / 1e9);
        }
        return out;
    }

    private List<MemorySegment> dispatch(List<MemorySegment> in) {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case "comm_rank" -> {
                MemorySegment r = alloc(4);
                r.set(ValueLayout.JAVA_INT, 0, comm.rank());
                yield List.of(r);
            }
            case "barrier" -> {
                comm.barrier(where);
                yield List.of();
            }
            case "send" -> {
                comm.send(in.getFirst(), t, n, peer, tag, where);
                yield List.of();
            }
            case "recv" -> {
                MemorySegment buf = alloc(data);
                comm.recv(buf, t, n, peer, tag, where);
                yield List.of(buf);
            }
            case "isend" -> List.of(RequestTable.put(comm.isend(in.getFirst(), t, n, peer, tag, where), null));
            case "irecv" -> {
                MemorySegment buf = alloc(data);
                Request r = comm.irecv(buf, t, n, peer, tag, where);
                yield List.of(RequestTable.put(r, buf));
            }
            case "wait" -> {
                RequestTable.Pending p = RequestTable.take(in.getFirst(), where);
                comm.wait(p.request(), where);
                yield p.buffer() == null ? List.of() : List.of(p.buffer());
            }
            case "allreduce" -> {
                MemorySegment out = alloc(data);
                comm.allreduce(in.getFirst(), out, t, n, reduce, where);
                yield List.of(out);
            }
            case "allgather" -> {
                MemorySegment out = alloc(n * comm.size() * t.byteSize());
                comm.allgather(in.getFirst(), out, t, n, where);
                yield List.of(out);
            }
            case "reduce_scatter" -> {
                MemorySegment out = alloc(n / comm.size() * t.byteSize());
                comm.reduceScatter(in.getFirst(), out, t, n / comm.size(), reduce, where);
                yield List.of(out);
            }
            case "bcast" -> {
                MemorySegment buf = alloc(data);
                buf.copyFrom(in.getFirst().asSlice(0, data.byteSize()));
                comm.bcast(buf, t, n, root, where);
                yield List.of(buf);
            }
            case "reduce" -> {
                MemorySegment out = alloc(data);
                comm.reduce(in.getFirst(), comm.rank() == root ? out : null, t, n, reduce, root, where);
                if (comm.rank() != root) {
                    out.copyFrom(in.getFirst().asSlice(0, data.byteSize()));
                }
                yield List.of(out);
            }
            case "alltoall" -> {
                MemorySegment out = alloc(data);
                comm.alltoall(in.getFirst(), out, t, n / comm.size(), where);
                yield List.of(out);
            }
            case "sendrecv" -> throw new IllegalStateException("sendrecv needs the received aval; use sendrecv()");
            default -> throw new WeftException(where, "unknown communication op '" + op + "'");
        };
    }

    /** {@code sendrecv}: sends {@code in} ({@link #data}) and receives {@code received}. */
    public List<MemorySegment> sendrecv(MemorySegment in, Aval received) {
        long start = DEBUG ? System.nanoTime() : 0;
        MemorySegment out = alloc(received);
        if (received.dtype() != data.dtype()) {
            throw new WeftException(where, "sendrecv sends " + data.dtype().specName() + " but receives "
                    + received.dtype().specName());
        }
        comm.sendrecv(in, data.dtype(), data.shape().size(), peer, tag, out, received.shape().size(), source, recvTag,
                where);
        if (DEBUG) {
            System.err.printf("r%d | sendrecv | %d items | %.6f%n", comm.rank(), data.shape().size(),
                    (System.nanoTime() - start) / 1e9);
        }
        return List.of(out);
    }

    private static MemorySegment alloc(Aval a) {
        return alloc(a.byteSize());
    }

    private static MemorySegment alloc(long bytes) {
        return Arena.ofAuto().allocate(Math.max(1, bytes), 64);
    }
}
