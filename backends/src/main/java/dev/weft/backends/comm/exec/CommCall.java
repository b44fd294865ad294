package dev.weft.backends.comm.exec;

import dev.weft.spi.Setting;
import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.prim.CommOp;
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
 * @param op     the operation's descriptor
 * @param comm   the communicator it runs on: the op's own while eager, the one its reference is bound to when
 *               compiled
 * @param reduce the runtime's reduce operator of a {@link CommOp.Reducing} op; null for other ops
 * @param data   dtype and shape of the data moved ({@link CommOp#data}); null for barrier and rank
 */
public record CommCall(CommOp op, Communicator comm, RuntimeReduceOp reduce, Aval data, SourceLocation where) {
    private static final boolean DEBUG = Setting.DEBUG.on();

    /** What a {@code sendrecv} receives; null for other ops. */
    public Aval received() {
        return op instanceof CommOp.SendRecv s ? s.result() : null;
    }

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
        return action(false);
    }

    /**
     * {@link #action()}, for a compiled program when {@code compiled}: a nonblocking collective's wait then keeps
     * the buffer the executor offers for its result, and the start reuses it ({@link ResultBuffers}).
     */
    public Action action(boolean compiled) {
        Communicator.BufferPairCall pair = selectPair();
        Action a = pair != null ? arrays(pair) : select(compiled);
        if (!DEBUG) {
            return a;
        }
        return (in, out) -> {
            long start = System.nanoTime();
            a.run(in, out);
            // One write per line: under mpirun, the pieces of a printf interleave with other ranks' lines.
            System.err.print(String.format("r%d | %s | %d items | %.6f%n", comm.rank(), op.kind(),
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

    /** {@link #bindPair}, checked ({@link CheckedComm}) where the schedule check applies to the communicator. */
    private Communicator.BufferPairCall selectPair() {
        Communicator.BufferPairCall pair = bindPair();
        return pair == null || !CommCheck.applies(comm, op) ? pair : CheckedComm.pair(this, pair);
    }

    /** {@link #bindOther}, checked where the schedule check applies to the communicator. */
    private Action select(boolean compiled) {
        Action a = bindOther(compiled);
        return op instanceof CommOp.Rank || !CommCheck.applies(comm, op) ? a : CheckedComm.action(this, a);
    }

    private Communicator.BufferPairCall bindPair() {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case CommOp.AllReduce a -> comm.bindAllreduce(t, n, reduce, where);
            case CommOp.AllGather a -> (in, out) -> comm.allgather(in, out, t, n, where);
            case CommOp.ReduceScatter r -> (in, out) -> comm.reduceScatter(in, out, t, n / comm.size(), reduce, where);
            case CommOp.Bcast(var c, int root) -> (in, out) -> {
                out.copyFrom(in.asSlice(0, data.byteSize()));
                comm.bcast(out, t, n, root, where);
            };
            case CommOp.Reduce(var c, var op, int root) -> (in, out) -> {
                comm.reduce(in, comm.rank() == root ? out : null, t, n, reduce, root, where);
                if (comm.rank() != root) {
                    out.copyFrom(in.asSlice(0, data.byteSize()));
                }
            };
            case CommOp.AllToAll a -> (in, out) -> comm.alltoall(in, out, t, n / comm.size(), where);
            case CommOp.AllGatherV v -> {
                long[] counts = CommOp.elements(v.counts(), CommOp.rowElements(data));
                yield (in, out) -> comm.allgatherv(in, out, t, counts, where);
            }
            case CommOp.GatherV(var c, var rows, int root) -> {
                long[] counts = CommOp.elements(rows, CommOp.rowElements(data));
                yield (in, out) -> comm.gatherv(in, comm.rank() == root ? out : null, t, counts, root, where);
            }
            case CommOp.ScatterV(var c, var rows, int root) -> {
                long[] counts = CommOp.elements(rows, CommOp.rowElements(data));
                yield (in, out) -> comm.scatterv(comm.rank() == root ? in : null, out, t, counts, root, where);
            }
            case CommOp.AllToAllV(var c, var send, var recv) -> {
                long row = CommOp.rowElements(data);
                long[] sendCounts = CommOp.elements(send, row), recvCounts = CommOp.elements(recv, row);
                yield (in, out) -> comm.alltoallv(in, out, t, sendCounts, recvCounts, where);
            }
            case CommOp.SendRecv(var c, int dest, int sendTag, int source, int recvTag, Aval received) ->
                    (in, out) -> comm.sendrecv(in, t, n, dest, sendTag, out, received.shape().size(), source, recvTag,
                            where);
            case CommOp.Rank r -> null;
            case CommOp.Barrier b -> null;
            case CommOp.Send s -> null;
            case CommOp.Recv r -> null;
            case CommOp.RecvAny r -> null;
            case CommOp.Isend s -> null;
            case CommOp.Irecv r -> null;
            case CommOp.Wait w -> null;
            case CommOp.CollectiveStart c -> null;
            case CommOp.CollectiveWait w -> null;
        };
    }

    /**
     * The start of a nonblocking collective on {@code n} elements of {@code t}: its result goes to a new buffer, which
     * the request holds until its wait hands it over as the result.
     */
    private Action start(CommOp.CollectiveStart op, DType t, long n) {
        int size = comm.size();
        return switch (op) {
            case CommOp.IAllReduce a -> started((in, buf) -> comm.iallreduce(in[0], buf, t, n, reduce, where), t, n);
            case CommOp.IAllGather a -> started((in, buf) -> comm.iallgather(in[0], buf, t, n, where), t, n * size);
            case CommOp.IReduceScatter r -> started((in, buf) -> comm.ireduceScatter(in[0], buf, t, n / size, reduce,
                    where), t, n / size);
            case CommOp.IBcast(var c, int root) -> started((in, buf) -> {
                buf.copyFrom(in[0].asSlice(0, data.byteSize()));
                return comm.ibcast(buf, t, n, root, where);
            }, t, n);
            case CommOp.IAllToAll a -> started((in, buf) -> comm.ialltoall(in[0], buf, t, n / size, where), t, n);
            case CommOp.IBarrier b -> (in, out) -> out[0] = RequestTable.put(comm.ibarrier(where), null, out[0]);
        };
    }

    /** A start on its operands and a result buffer of {@code count} elements of {@code t}. */
    private static Action started(Post post, DType t, long count) {
        ResultBuffers buffers = new ResultBuffers(count * t.byteSize());
        return (in, out) -> {
            MemorySegment buf = buffers.take();
            out[0] = RequestTable.put(new RequestTable.Pending(post.start(in, buf), buf, buffers), out[0]);
        };
    }

    /** Starts a nonblocking collective on the operands {@code in}, its result going to {@code buf}. */
    @FunctionalInterface
    private interface Post {
        PendingRequest start(MemorySegment[] in, MemorySegment buf);
    }

    /** The operations that are not a {@link #bindPair}. */
    private Action bindOther(boolean compiled) {
        DType t = data == null ? null : data.dtype();
        long n = data == null ? 0 : data.shape().size();
        return switch (op) {
            case CommOp.Rank r -> (in, out) -> out[0].set(ValueLayout.JAVA_INT, 0, comm.rank());
            case CommOp.Barrier b -> (in, out) -> comm.barrier(where);
            case CommOp.Send(var c, int dest, int tag) -> (in, out) -> comm.send(in[0], t, n, dest, tag, where);
            case CommOp.Recv(var c, int source, int tag, var r) -> (in, out) -> comm.recv(out[0], t, n, source, tag,
                    where);
            case CommOp.RecvAny(var c, int source, int tag, var r) -> (in, out) -> comm.recvAny(out[0], t, n, source,
                    tag, out[1], where);
            case CommOp.Isend(var c, int dest, int tag) -> (in, out) -> out[0] = RequestTable.put(
                    comm.isend(in[0], t, n, dest, tag, where), null, out[0]);
            case CommOp.Irecv(var c, int source, int tag, var r) -> (in, out) -> {
                MemorySegment buf = NativeMemory.allocate(data.byteSize());
                out[0] = RequestTable.put(comm.irecv(buf, t, n, source, tag, where), buf, out[0]);
            };
            case CommOp.Wait w -> (in, out) -> {
                RequestTable.Pending p = RequestTable.take(in[0], where);
                CheckedRequest.await(comm, p.request(), where);
                if (p.buffer() != null) {
                    out[0] = p.buffer();
                }
            };
            case CommOp.CollectiveStart c -> start(c, t, n);
            case CommOp.CollectiveWait w -> (in, out) -> {
                RequestTable.Pending p = RequestTable.take(in[0], where);
                comm.wait(p.request(), where);
                if (p.buffer() != null) {
                    if (compiled && p.buffers() != null) {
                        p.buffers().give(out[0]);
                    }
                    out[0] = p.buffer();
                }
            };
            case CommOp.Collective c -> throw new IllegalStateException(op.kind() + " is a pair action");
            case CommOp.SendRecv s -> throw new IllegalStateException(op.kind() + " is a pair action");
        };
    }
}
