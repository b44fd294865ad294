package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.lowering.ir.Func;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * One {@code weft.nccl.<op>} custom call, from its descriptor (the {@code backend_config}): runs the op on device buffers
 * by queueing NCCL calls (and, for custom reduce ops, a gather and a local reduction kernel) on a stream. The
 * semantics are those of the CPU runtime's {@code CommCall}: {@code bcast} and {@code reduce} write a result on
 * every rank (a non-root rank's {@code reduce} result is its own operand), {@code barrier} orders the streams of
 * all ranks (the host does not wait), {@code comm_rank} uploads the rank. Every communication goes through the
 * {@link dev.weft.backends.comm.Communicator} interface of an {@link NcclCommunicator} on the call's stream.
 *
 * @param op      the operation's descriptor
 * @param dtype   the element type of the data moved; null for {@code barrier} and {@code comm_rank}
 * @param count   the elements of the operand (or of the received tensor)
 * @param row     the elements of one row along axis 0 of the operand, by which a variable-count collective's rows
 *                become elements
 * @param builtin the built-in reduce op; null if none or custom
 * @param custom  the module's reduction function of a custom reduce op; null otherwise
 */
record NcclCall(CommOp op, NcclHandle comm, DType dtype, long count, long row, RuntimeReduceOp.Builtin builtin,
                Func custom, SourceLocation where) {

    /** Queues the op on {@code stream}; returns the device buffers of its tensor results (see the handler contract). */
    List<Long> run(NcclContext ctx, long[] in, long[] out, long stream) {
        DeviceMemory memory = ctx.memory();
        NcclCommunicator c = ctx.on(comm, stream);
        long bytes = dtype == null ? 0 : count * dtype.byteSize();
        return switch (op) {
            case CommOp.Rank r -> {
                try (Arena arena = Arena.ofConfined()) {
                    memory.upload(stream, arena.allocateFrom(ValueLayout.JAVA_INT, c.rank()), out[0]);
                }
                yield List.of(out[0]);
            }
            case CommOp.Barrier b -> {
                c.barrier(where);
                yield List.of();
            }
            case CommOp.Send s -> {
                c.send(device(in[0]), dtype, count, s.dest(), s.tag(), where);
                yield List.of();
            }
            case CommOp.Recv r -> {
                c.recv(device(out[0]), dtype, count, r.source(), r.tag(), where);
                yield List.of(out[0]);
            }
            case CommOp.RecvAny r -> throw NcclCommunicator.noRecvAny(where);
            case CommOp.Isend s -> {
                ctx.put(out[0], new NcclContext.Pending(c.isend(device(in[0]), dtype, count, s.dest(), s.tag(),
                        where), 0));
                yield List.of(out[0]);
            }
            case CommOp.Irecv r -> {
                long buffer = memory.allocate(stream, bytes);
                ctx.put(out[0], new NcclContext.Pending(c.irecv(device(buffer), dtype, count, r.source(), r.tag(),
                        where), buffer));
                yield List.of(out[0]);
            }
            case CommOp.Wait w -> {
                NcclContext.Pending p = ctx.take(in[0], where);
                c.wait(p.request(), where);
                yield p.buffer() == 0 ? List.of() : List.of(p.buffer());
            }
            case CommOp.AllReduce a -> {
                if (builtin != null) {
                    c.allreduce(device(in[0]), device(out[0]), dtype, count, builtin, where);
                } else {
                    gatherAndReduce(ctx, c, in[0], out[0], stream);
                }
                yield List.of(out[0]);
            }
            case CommOp.AllGather a -> {
                c.allgather(device(in[0]), device(out[0]), dtype, count, where);
                yield List.of(out[0]);
            }
            case CommOp.ReduceScatter r -> {
                long perRank = count / c.size();
                if (builtin != null) {
                    c.reduceScatter(device(in[0]), device(out[0]), dtype, perRank, builtin, where);
                } else {
                    long blocks = memory.allocate(stream, bytes);
                    c.alltoall(device(in[0]), device(blocks), dtype, perRank, where);
                    ctx.localReduce().apply(stream, custom, dtype, perRank, c.size(), blocks, out[0]);
                    memory.free(stream, blocks);
                }
                yield List.of(out[0]);
            }
            case CommOp.Bcast b -> {
                // The runtime broadcasts in place: the root's operand is its result's first content.
                if (c.rank() == b.root() && out[0] != in[0]) {
                    memory.copy(stream, out[0], in[0], bytes);
                }
                c.bcast(device(out[0]), dtype, count, b.root(), where);
                yield List.of(out[0]);
            }
            case CommOp.Reduce r -> {
                boolean isRoot = c.rank() == r.root();
                if (builtin != null) {
                    c.reduce(device(in[0]), device(out[0]), dtype, count, builtin, r.root(), where);
                } else {
                    gatherAndReduce(ctx, c, in[0], isRoot ? out[0] : 0, stream);
                }
                if (!isRoot) {
                    memory.copy(stream, out[0], in[0], bytes);
                }
                yield List.of(out[0]);
            }
            case CommOp.AllToAll a -> {
                c.alltoall(device(in[0]), device(out[0]), dtype, count / c.size(), where);
                yield List.of(out[0]);
            }
            case CommOp.AllGatherV v -> {
                c.allgatherv(device(in[0]), device(out[0]), dtype, CommOp.elements(v.counts(), row), where);
                yield List.of(out[0]);
            }
            case CommOp.GatherV v -> {
                c.gatherv(device(in[0]), device(out[0]), dtype, CommOp.elements(v.counts(), row), v.root(), where);
                yield List.of(out[0]);
            }
            case CommOp.ScatterV v -> {
                c.scatterv(device(in[0]), device(out[0]), dtype, CommOp.elements(v.counts(), row), v.root(), where);
                yield List.of(out[0]);
            }
            case CommOp.AllToAllV v -> {
                c.alltoallv(device(in[0]), device(out[0]), dtype, CommOp.elements(v.sendCounts(), row),
                        CommOp.elements(v.recvCounts(), row), where);
                yield List.of(out[0]);
            }
            case CommOp.SendRecv s -> {
                c.sendrecv(device(in[0]), dtype, count, s.dest(), s.sendTag(), device(out[0]),
                        s.result().shape().size(), s.source(), s.recvTag(), where);
                yield List.of(out[0]);
            }
            case CommOp.CollectiveStart s -> {
                ctx.put(out[0], start(ctx, c, s, in, stream));
                yield List.of(out[0]);
            }
            case CommOp.CollectiveWait w -> {
                NcclContext.Pending p = ctx.take(in[0], where);
                c.wait(p.request(), where);
                yield p.buffer() == 0 ? List.of() : List.of(p.buffer());
            }
        };
    }

    /**
     * A nonblocking collective queued on the stream into a new device buffer, which its wait hands over as the
     * result: NCCL collectives are asynchronous already, so the start is the queued collective and the wait a
     * stream dependency. Custom reduce ops never get here ({@code Comm} refuses them nonblocking).
     */
    private NcclContext.Pending start(NcclContext ctx, NcclCommunicator c, CommOp.CollectiveStart s, long[] in,
                                      long stream) {
        DeviceMemory memory = ctx.memory();
        long bytes = dtype == null ? 0 : count * dtype.byteSize();
        int size = c.size();
        return switch (s) {
            case CommOp.IAllReduce a -> {
                long out = memory.allocate(stream, bytes);
                yield new NcclContext.Pending(c.iallreduce(device(in[0]), device(out), dtype, count, builtin, where),
                        out);
            }
            case CommOp.IAllGather a -> {
                long out = memory.allocate(stream, bytes * size);
                yield new NcclContext.Pending(c.iallgather(device(in[0]), device(out), dtype, count, where), out);
            }
            case CommOp.IReduceScatter r -> {
                long out = memory.allocate(stream, bytes / size);
                yield new NcclContext.Pending(c.ireduceScatter(device(in[0]), device(out), dtype, count / size,
                        builtin, where), out);
            }
            case CommOp.IBcast b -> {
                long out = memory.allocate(stream, bytes);
                if (c.rank() == b.root()) {
                    memory.copy(stream, out, in[0], bytes);
                }
                yield new NcclContext.Pending(c.ibcast(device(out), dtype, count, b.root(), where), out);
            }
            case CommOp.IAllToAll a -> {
                long out = memory.allocate(stream, bytes);
                yield new NcclContext.Pending(c.ialltoall(device(in[0]), device(out), dtype, count / size, where),
                        out);
            }
            case CommOp.IBarrier b -> new NcclContext.Pending(c.ibarrier(where), 0);
        };
    }

    /**
     * A custom reduction: every rank's {@code in} gathered, then combined in rank order by the local kernel into
     * {@code out}; with {@code out == 0} (a non-root rank of {@code reduce}) only the gather runs.
     */
    private void gatherAndReduce(NcclContext ctx, NcclCommunicator c, long in, long out, long stream) {
        DeviceMemory memory = ctx.memory();
        long gathered = memory.allocate(stream, c.size() * count * dtype.byteSize());
        c.allgather(device(in), device(gathered), dtype, count, where);
        if (out != 0) {
            ctx.localReduce().apply(stream, custom, dtype, count, c.size(), gathered, out);
        }
        memory.free(stream, gathered);
    }

    private static MemorySegment device(long ptr) {
        return NcclCommunicator.device(ptr);
    }
}
