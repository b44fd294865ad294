package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.lowering.ir.Func;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * One {@code weft.nccl.<op>} custom call, from its descriptor (the {@code backend_config}): runs the op on device buffers
 * by queueing NCCL calls (and, for custom reduce ops, a gather and a local reduction kernel) on a stream. The
 * semantics are those of the CPU runtime's {@code CommCall}: {@code bcast} and {@code reduce} write a result on
 * every rank (a non-root rank's {@code reduce} result is its own operand), {@code barrier} is a one-element
 * allreduce (it orders the streams of all ranks; the host does not wait), {@code comm_rank} uploads the rank.
 *
 * @param op      the operation's descriptor
 * @param dtype   the element type of the data moved; null for {@code barrier} and {@code comm_rank}
 * @param count   the elements of the operand (or of the received tensor)
 * @param builtin the built-in reduce op; null if none or custom
 * @param custom  the module's reduction function of a custom reduce op; null otherwise
 */
record NcclCall(CommOp op, NcclCommunicator comm, DType dtype, long count, RuntimeReduceOp.Builtin builtin, Func custom,
                SourceLocation where) {

    /** Queues the op on {@code stream}; returns the device buffers of its tensor results (see the handler contract). */
    List<Long> run(NcclContext ctx, long[] in, long[] out, long stream) {
        DeviceMemory memory = ctx.memory();
        long bytes = dtype == null ? 0 : count * dtype.byteSize();
        return switch (op) {
            case CommOp.Rank r -> {
                try (Arena arena = Arena.ofConfined()) {
                    memory.upload(stream, arena.allocateFrom(ValueLayout.JAVA_INT, comm.rank()), out[0]);
                }
                yield List.of(out[0]);
            }
            case CommOp.Barrier b -> {
                long scratch = memory.allocate(stream, DType.I32.byteSize());
                comm.allreduce(scratch, scratch, DType.I32, 1, RuntimeReduceOp.Builtin.SUM, stream, where);
                memory.free(stream, scratch);
                yield List.of();
            }
            case CommOp.Send s -> {
                comm.send(in[0], dtype, count, s.dest(), stream, where);
                yield List.of();
            }
            case CommOp.Recv r -> {
                comm.recv(out[0], dtype, count, r.source(), stream, where);
                yield List.of(out[0]);
            }
            case CommOp.Isend s -> {
                ctx.put(out[0], new NcclContext.Pending(comm.isend(in[0], dtype, count, s.dest(), stream, where), 0));
                yield List.of(out[0]);
            }
            case CommOp.Irecv r -> {
                long buffer = memory.allocate(stream, bytes);
                ctx.put(out[0], new NcclContext.Pending(comm.irecv(buffer, dtype, count, r.source(), stream, where),
                        buffer));
                yield List.of(out[0]);
            }
            case CommOp.Wait w -> {
                NcclContext.Pending p = ctx.take(in[0], where);
                comm.wait(p.request(), stream, where);
                yield p.buffer() == 0 ? List.of() : List.of(p.buffer());
            }
            case CommOp.AllReduce a -> {
                if (builtin != null) {
                    comm.allreduce(in[0], out[0], dtype, count, builtin, stream, where);
                } else {
                    gatherAndReduce(ctx, in[0], out[0], stream);
                }
                yield List.of(out[0]);
            }
            case CommOp.AllGather a -> {
                comm.allgather(in[0], out[0], dtype, count, stream, where);
                yield List.of(out[0]);
            }
            case CommOp.ReduceScatter r -> {
                long perRank = count / comm.size();
                if (builtin != null) {
                    comm.reduceScatter(in[0], out[0], dtype, perRank, builtin, stream, where);
                } else {
                    long blocks = memory.allocate(stream, bytes);
                    comm.alltoall(in[0], blocks, dtype, perRank, stream, where);
                    ctx.localReduce().apply(stream, custom, dtype, perRank, comm.size(), blocks, out[0]);
                    memory.free(stream, blocks);
                }
                yield List.of(out[0]);
            }
            case CommOp.Bcast b -> {
                comm.bcast(in[0], out[0], dtype, count, b.root(), stream, where);
                yield List.of(out[0]);
            }
            case CommOp.Reduce r -> {
                boolean isRoot = comm.rank() == r.root();
                if (builtin != null) {
                    comm.reduce(in[0], out[0], dtype, count, builtin, r.root(), stream, where);
                } else {
                    gatherAndReduce(ctx, in[0], isRoot ? out[0] : 0, stream);
                }
                if (!isRoot) {
                    memory.copy(stream, out[0], in[0], bytes);
                }
                yield List.of(out[0]);
            }
            case CommOp.AllToAll a -> {
                comm.alltoall(in[0], out[0], dtype, count / comm.size(), stream, where);
                yield List.of(out[0]);
            }
            case CommOp.SendRecv s -> {
                comm.sendrecv(in[0], count, s.dest(), out[0], s.result().shape().size(), s.source(), dtype, stream,
                        where);
                yield List.of(out[0]);
            }
        };
    }

    /**
     * A custom reduction: every rank's {@code in} gathered, then combined in rank order by the local kernel into
     * {@code out}; with {@code out == 0} (a non-root rank of {@code reduce}) only the gather runs.
     */
    private void gatherAndReduce(NcclContext ctx, long in, long out, long stream) {
        DeviceMemory memory = ctx.memory();
        long gathered = memory.allocate(stream, comm.size() * count * dtype.byteSize());
        comm.allgather(in, gathered, dtype, count, stream, where);
        if (out != 0) {
            ctx.localReduce().apply(stream, custom, dtype, count, comm.size(), gathered, out);
        }
        memory.free(stream, gathered);
    }
}
