package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * One rank's NCCL communicator queueing its operations on one CUDA stream: the {@link Communicator} of the GPU
 * target, over an NCCL communicator ({@link NcclHandle}) that the communicators on other streams share.
 *
 * <p>Every operation only enqueues work on the stream; nothing here waits for the GPU. Buffers are device memory:
 * a segment's {@linkplain MemorySegment#address address} is the device pointer ({@link #device}), never read on the
 * host, and its size is not checked. The semantics are {@link Communicator}'s, with these differences: NCCL has no
 * tags, so tags are ignored and point-to-point messages between two ranks match in posting order; a "completed"
 * operation is one whose work is queued ahead of whatever is queued next on its stream; reductions take the
 * built-in operators only (a custom one is a {@link CommException}: the GPU executor gathers and reduces with a
 * kernel instead); {@code split}, {@code dup} and {@code privateDup} are refused with a {@link CommException}
 * naming the op (NCCL communicators are made over a bootstrap communicator, which is split instead).
 *
 * <p>Point-to-point calls are fused in NCCL groups. NCCL needs this whenever sends and receives must progress
 * together: a send blocks the GPU until the peer's matching receive runs, so two ranks that each send to the
 * other in a group of its own before receiving hang, and a send to self without its receive in the same group
 * is {@code ncclInvalidUsage}. The rule: every point-to-point call ({@link #send}, {@link #recv},
 * {@link #sendrecv}, {@link #isend}, {@link #irecv}) joins this thread's open group, opening one (NCCL's group
 * state is per thread, and so is this one), and leaves it open. The group ends at the next collective (before
 * it starts), {@link #wait}, {@link #alltoall} (which ends its own group, since a local kernel may read its
 * blocks next) or {@link #flush}. So consecutive point-to-point calls form one group: a blocking send followed
 * by a receive, a ring of {@code send(next); recv(prev)} or {@code isend; irecv; wait; wait}.
 *
 * <p>NCCL queues a group's transfers on the stream only when the group ends, so work queued while it is open
 * runs before them. Whoever queues other work must therefore {@link #flush} before work that reads a buffer
 * received in the group, before reading results on the host, and must not reuse a buffer the group sends from
 * or receives into until then; the GPU executor does all three. When a group ends, each of its requests records
 * a CUDA event on its stream; {@code wait} makes the waiting stream wait on that event.
 *
 * <p>After each enqueue, {@code ncclCommGetAsyncError} is checked; an asynchronous error aborts the communicator
 * and raises a {@link CommException} naming the op and the user's line, as does any error NCCL returns.
 */
public final class NcclCommunicator implements Communicator, AutoCloseable {
    private static final ThreadLocal<Group> OPEN_GROUP = new ThreadLocal<>();

    private final NcclHandle handle;
    private final long stream;
    private final DeviceMemory memory;

    NcclCommunicator(NcclHandle handle, long stream, DeviceMemory memory) {
        this.handle = handle;
        this.stream = stream;
        this.memory = memory;
    }

    /**
     * Collective over {@code bootstrap}: a new NCCL communicator with its ranks, queueing on {@code stream}, with
     * {@code memory} for a barrier's scratch element. The CUDA device this rank uses must be current on the calling
     * thread.
     */
    public static NcclCommunicator create(NcclLibrary nccl, StreamEvents events, DeviceMemory memory,
                                          Communicator bootstrap, long stream, SourceLocation where) {
        return new NcclCommunicator(NcclHandle.create(nccl, events, bootstrap, where), stream, memory);
    }

    /** The buffer at device address {@code ptr}, as this communicator's operations take it. */
    public static MemorySegment device(long ptr) {
        return MemorySegment.ofAddress(ptr);
    }

    @Override
    public int rank() {
        return handle.rank;
    }

    @Override
    public int size() {
        return handle.size;
    }

    /** The bootstrap communicator's name. */
    @Override
    public String name() {
        return handle.name;
    }

    /** A nonblocking send or receive: completed on the GPU once the event its group recorded has fired. */
    public static final class Request implements dev.weft.backends.comm.PendingRequest {
        private final NcclHandle owner;
        private final CommOp.Kind op;
        private final long stream;
        private final SourceLocation where;
        private long event;
        private boolean waited;

        private Request(NcclHandle owner, CommOp.Kind op, long stream, SourceLocation where) {
            this.owner = owner;
            this.op = op;
            this.stream = stream;
            this.where = where;
        }

        @Override
        public String describe() {
            return op + " at " + where;
        }

        @Override
        public String toString() {
            return describe();
        }
    }

    /** The group of point-to-point calls this thread has open, and the requests it will complete. */
    private static final class Group {
        final List<String> ops = new ArrayList<>();
        final List<Request> requests = new ArrayList<>();
        final List<NcclHandle> comms = new ArrayList<>();
        SourceLocation first;

        void add(NcclHandle c, CommOp.Kind op, SourceLocation where) {
            if (first == null) {
                first = where;
            }
            ops.add(op + " at " + where);
            if (!comms.contains(c)) {
                comms.add(c);
            }
        }
    }

    /** A one-element {@code ncclAllReduce} on a scratch buffer: it orders the streams of all ranks, not the hosts. */
    @Override
    public void barrier(SourceLocation where) {
        long scratch = memory.allocate(stream, DType.I32.byteSize());
        collective(CommOp.Kind.BARRIER, where, () -> handle.nccl.allReduce(scratch, scratch, 1,
                NcclLibrary.dataType(DType.I32), NcclLibrary.reduceOp(RuntimeReduceOp.Builtin.SUM), handle.live(where),
                stream), "ncclAllReduce");
        memory.free(stream, scratch);
    }

    /** {@code ncclAllReduce}: {@code out = in_0 ⊕ ... ⊕ in_{size-1}} on every rank. */
    @Override
    public void allreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                          SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ALLREDUCE;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        int reduce = NcclLibrary.reduceOp(builtin(k, op, where));
        collective(k, where, () -> handle.nccl.allReduce(send, recv, count, NcclLibrary.dataType(dtype), reduce,
                handle.live(where), stream), "ncclAllReduce");
    }

    /** {@code ncclAllGather}: {@code out} ({@code size * countPerRank} elements) gets every rank's {@code in}. */
    @Override
    public void allgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ALLGATHER;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        collective(k, where, () -> handle.nccl.allGather(send, recv, countPerRank, NcclLibrary.dataType(dtype),
                handle.live(where), stream), "ncclAllGather");
    }

    /** {@code ncclReduceScatter}: block {@code rank} ({@code countPerRank} elements) of the reduction of {@code in}. */
    @Override
    public void reduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                              SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.REDUCE_SCATTER;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        int reduce = NcclLibrary.reduceOp(builtin(k, op, where));
        collective(k, where, () -> handle.nccl.reduceScatter(send, recv, countPerRank, NcclLibrary.dataType(dtype),
                reduce, handle.live(where), stream), "ncclReduceScatter");
    }

    /** {@code ncclBroadcast} in place: every rank's {@code buf} receives {@code root}'s. */
    @Override
    public void bcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.BCAST;
        long b = device(k, buf, where);
        collective(k, where, () -> handle.nccl.broadcast(b, b, count, NcclLibrary.dataType(dtype), root,
                handle.live(where), stream), "ncclBroadcast");
    }

    /** {@code ncclReduce}: like {@link #allreduce}, but only {@code root}'s {@code out} is written. */
    @Override
    public void reduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, int root,
                       SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.REDUCE;
        long send = device(k, in, where);
        long recv = out == null && handle.rank != root ? 0 : device(k, out, where);
        int reduce = NcclLibrary.reduceOp(builtin(k, op, where));
        collective(k, where, () -> handle.nccl.reduce(send, recv, count, NcclLibrary.dataType(dtype), reduce, root,
                handle.live(where), stream), "ncclReduce");
    }

    /**
     * Block {@code j} of {@code in} goes to rank {@code j} and arrives as block {@code rank} of its {@code out}:
     * one {@code ncclSend} and one {@code ncclRecv} per rank, in the open group, which it then ends.
     */
    @Override
    public void alltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ALLTOALL;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        long blockBytes = countPerRank * dtype.byteSize();
        inGroup(k, where, () -> {
            for (int peer = 0; peer < handle.size; peer++) {
                enqueueSend(send + peer * blockBytes, dtype, countPerRank, peer, k, where);
                enqueueRecv(recv + peer * blockBytes, dtype, countPerRank, peer, k, where);
            }
        });
        closeGroup(k.label(), where);
    }

    /**
     * Rank {@code r}'s {@code counts[r]} elements to every rank's {@code out} at its offset: an {@code ncclSend} to
     * each rank and an {@code ncclRecv} from each (none for an empty block), in the open group, which it then ends.
     */
    @Override
    public void allgatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ALLGATHERV;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        // grouped point-to-point rather than an ncclAllGather of blocks padded to the largest count: no padded
        // scratch buffer, no compaction kernel after it, and only the rows themselves cross the wire
        inGroup(k, where, () -> {
            long at = 0;
            for (int peer = 0; peer < handle.size; peer++) {
                if (counts[handle.rank] > 0) {
                    enqueueSend(send, dtype, counts[handle.rank], peer, k, where);
                }
                if (counts[peer] > 0) {
                    enqueueRecv(recv + at * dtype.byteSize(), dtype, counts[peer], peer, k, where);
                }
                at += counts[peer];
            }
        });
        closeGroup(k.label(), where);
    }

    /**
     * Rank {@code r}'s {@code counts[r]} elements to {@code root}'s {@code out} at its offset: an {@code ncclSend}
     * to the root and, on the root, an {@code ncclRecv} from each rank (none for an empty block), grouped as
     * {@link #allgatherv}.
     */
    @Override
    public void gatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                        SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.GATHERV;
        long send = device(k, in, where);
        long recv = handle.rank == root ? device(k, out, where) : 0;
        inGroup(k, where, () -> {
            if (counts[handle.rank] > 0) {
                enqueueSend(send, dtype, counts[handle.rank], root, k, where);
            }
            long at = 0;
            for (int peer = 0; handle.rank == root && peer < handle.size; peer++) {
                if (counts[peer] > 0) {
                    enqueueRecv(recv + at * dtype.byteSize(), dtype, counts[peer], peer, k, where);
                }
                at += counts[peer];
            }
        });
        closeGroup(k.label(), where);
    }

    /**
     * Block {@code r} ({@code counts[r]} elements) of {@code root}'s {@code in} to rank {@code r}'s {@code out}: on
     * the root an {@code ncclSend} to each rank, an {@code ncclRecv} from the root on every rank (none for an empty
     * block), grouped as {@link #allgatherv}.
     */
    @Override
    public void scatterv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                         SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.SCATTERV;
        long send = handle.rank == root ? device(k, in, where) : 0;
        long recv = device(k, out, where);
        inGroup(k, where, () -> {
            long at = 0;
            for (int peer = 0; handle.rank == root && peer < handle.size; peer++) {
                if (counts[peer] > 0) {
                    enqueueSend(send + at * dtype.byteSize(), dtype, counts[peer], peer, k, where);
                }
                at += counts[peer];
            }
            if (counts[handle.rank] > 0) {
                enqueueRecv(recv, dtype, counts[handle.rank], root, k, where);
            }
        });
        closeGroup(k.label(), where);
    }

    /**
     * {@link #alltoall} on blocks of their own sizes: an {@code ncclSend} of {@code sendCounts[j]} elements to
     * each rank {@code j} and an {@code ncclRecv} of {@code recvCounts[i]} from each rank {@code i} (none for an
     * empty block), in the open group, which it then ends.
     */
    @Override
    public void alltoallv(MemorySegment in, MemorySegment out, DType dtype, long[] sendCounts, long[] recvCounts,
                          SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ALLTOALLV;
        long send = device(k, in, where);
        long recv = device(k, out, where);
        inGroup(k, where, () -> {
            long from = 0, to = 0;
            for (int peer = 0; peer < handle.size; peer++) {
                if (sendCounts[peer] > 0) {
                    enqueueSend(send + from * dtype.byteSize(), dtype, sendCounts[peer], peer, k, where);
                }
                if (recvCounts[peer] > 0) {
                    enqueueRecv(recv + to * dtype.byteSize(), dtype, recvCounts[peer], peer, k, where);
                }
                from += sendCounts[peer];
                to += recvCounts[peer];
            }
        });
        closeGroup(k.label(), where);
    }

    /**
     * {@code ncclSend} of {@code count} elements to {@code dest}, joining the open group; {@code buf} must stay
     * unchanged until the group ends. The tag is ignored.
     */
    @Override
    public void send(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        long b = device(CommOp.Kind.SEND, buf, where);
        inGroup(CommOp.Kind.SEND, where, () -> enqueueSend(b, dtype, count, dest, CommOp.Kind.SEND, where));
    }

    /**
     * {@code ncclRecv} of {@code count} elements from {@code src}, joining the open group: complete once it ends.
     * The tag is ignored.
     */
    @Override
    public void recv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        long b = device(CommOp.Kind.RECV, buf, where);
        inGroup(CommOp.Kind.RECV, where, () -> enqueueRecv(b, dtype, count, src, CommOp.Kind.RECV, where));
    }

    /** Refused: NCCL has no wildcard receive ({@link #noRecvAny}). */
    @Override
    public void recvAny(MemorySegment buf, DType dtype, long count, int src, int tag, MemorySegment status,
                        SourceLocation where) {
        throw noRecvAny(where);
    }

    /** The error of a {@code recv_any} on NCCL, which matches messages by peer and order only and has no status. */
    static CommException noRecvAny(SourceLocation where) {
        return new CommException(where, CommOp.Kind.RECV_ANY + ": NCCL has no receive from any source or with any"
                + " tag, nor a status to say what matched; run it on the cpu target (MPI or fake ranks)");
    }

    /** A send to {@code dest} and a receive from {@code src} in the open group, as {@link #send}, {@link #recv}. */
    @Override
    public void sendrecv(MemorySegment sendbuf, DType dtype, long count, int dest, int sendtag,
                         MemorySegment recvbuf, long recvcount, int src, int recvtag, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.SENDRECV;
        long send = device(k, sendbuf, where);
        long recv = device(k, recvbuf, where);
        inGroup(k, where, () -> {
            enqueueSend(send, dtype, count, dest, k, where);
            enqueueRecv(recv, dtype, recvcount, src, k, where);
        });
    }

    /** Joins a send to the open group (opening one if needed); {@code buf} must stay unchanged until {@link #wait}. */
    @Override
    public Request isend(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.ISEND;
        long b = device(k, buf, where);
        Group g = inGroup(k, where, () -> enqueueSend(b, dtype, count, dest, k, where));
        return pending(g, k, where);
    }

    /** Joins a receive into {@code buf} to the open group; {@code buf} holds the message after {@link #wait}. */
    @Override
    public Request irecv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        CommOp.Kind k = CommOp.Kind.IRECV;
        long b = device(k, buf, where);
        Group g = inGroup(k, where, () -> enqueueRecv(b, dtype, count, src, k, where));
        return pending(g, k, where);
    }

    /**
     * Makes work queued on this communicator's stream from now on wait for {@code request}, closing its group first
     * if it is still open. A request is waited once, on its own NCCL communicator (on any stream).
     */
    @Override
    public void wait(dev.weft.backends.comm.PendingRequest request, SourceLocation where) {
        if (!(request instanceof Request r)) {
            throw new CommException(where, "wait: " + (request == null ? "null request" : request.describe())
                    + " is not an NCCL request");
        }
        if (r.owner != handle) {
            throw new CommException(where, "wait: " + r + " belongs to communicator '" + r.owner.name
                    + "', not '" + handle.name + "'");
        }
        if (r.waited) {
            throw new CommException(where, "wait: " + r + " was already waited");
        }
        if (r.event == 0) {
            closeGroup(CommOp.Kind.WAIT.label(), where);
        }
        if (r.event == 0) {
            throw new CommException(where, "wait: " + r + " never started: its NCCL group failed");
        }
        r.waited = true;
        handle.events.wait(stream, r.event);
        handle.events.destroy(r.event);
    }

    /**
     * {@link #allreduce}, queued: NCCL collectives are asynchronous on the stream already, so the start queues the
     * collective and the request's wait orders the waiting stream after it (a no-op on this one).
     */
    @Override
    public Request iallreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                              SourceLocation where) {
        allreduce(in, out, dtype, count, op, where);
        return queued(CommOp.Kind.IALLREDUCE, where);
    }

    /** {@link #allgather}, queued (see {@link #iallreduce}). */
    @Override
    public Request iallgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                              SourceLocation where) {
        allgather(in, out, dtype, countPerRank, where);
        return queued(CommOp.Kind.IALLGATHER, where);
    }

    /** {@link #reduceScatter}, queued (see {@link #iallreduce}). */
    @Override
    public Request ireduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                                  SourceLocation where) {
        reduceScatter(in, out, dtype, countPerRank, op, where);
        return queued(CommOp.Kind.IREDUCE_SCATTER, where);
    }

    /** {@link #bcast}, queued (see {@link #iallreduce}). */
    @Override
    public Request ibcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        bcast(buf, dtype, count, root, where);
        return queued(CommOp.Kind.IBCAST, where);
    }

    /** {@link #alltoall}, queued (see {@link #iallreduce}). */
    @Override
    public Request ialltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                             SourceLocation where) {
        alltoall(in, out, dtype, countPerRank, where);
        return queued(CommOp.Kind.IALLTOALL, where);
    }

    /** {@link #barrier}, queued (see {@link #iallreduce}). */
    @Override
    public Request ibarrier(SourceLocation where) {
        barrier(where);
        return queued(CommOp.Kind.IBARRIER, where);
    }

    /** A request completed by the event recorded now on this stream, after the collective just queued. */
    private Request queued(CommOp.Kind op, SourceLocation where) {
        Request r = new Request(handle, op, stream, where);
        r.event = handle.events.record(stream);
        return r;
    }

    /** Refused: NCCL communicators are made over a bootstrap communicator, which is split instead. */
    @Override
    public Communicator split(int color, int key, SourceLocation where) {
        throw notMadeHere(CommOp.Kind.SPLIT, where);
    }

    /** Refused: NCCL communicators are made over a bootstrap communicator, which is duplicated instead. */
    @Override
    public Communicator dup(SourceLocation where) {
        throw notMadeHere(CommOp.Kind.DUP, where);
    }

    /** Refused: the schedule check runs on the bootstrap communicator's private duplicate. */
    @Override
    public Communicator privateDup(SourceLocation where) {
        throw notMadeHere(CommOp.Kind.PRIVATE_DUP, where);
    }

    /** {@code ncclCommDestroy}: the NCCL communicator cannot be used afterwards, on any stream. */
    @Override
    public void free(SourceLocation where) {
        handle.destroy(CommOp.Kind.FREE.label(), where);
    }

    /** {@link #free}. */
    @Override
    public void close() {
        free(SourceLocation.UNKNOWN);
    }

    /**
     * Ends this thread's open NCCL group, if any, queueing its transfers and recording the events of its requests.
     * A failure names the line of the group's first operation.
     */
    public static void flush() {
        Group g = OPEN_GROUP.get();
        if (g != null) {
            closeGroup("flush", g.first);
        }
    }

    private CommException notMadeHere(CommOp.Kind op, SourceLocation where) {
        return new CommException(where, op + " on NCCL communicator '" + handle.name + "' is not supported: NCCL "
                + "communicators are made over a bootstrap communicator; " + op + " that one");
    }

    /** {@code buf}'s device address: a native segment's; anything else is an error naming {@code op}. */
    private static long device(CommOp.Kind op, MemorySegment buf, SourceLocation where) {
        if (buf == null || !buf.isNative()) {
            throw new CommException(where, op + ": an NCCL buffer is a device address (NcclCommunicator.device), not "
                    + (buf == null ? "null" : "a heap segment"));
        }
        return buf.address();
    }

    /** {@code op} as NCCL's: only the built-in operators are NCCL's. */
    private static RuntimeReduceOp.Builtin builtin(CommOp.Kind kind, RuntimeReduceOp op, SourceLocation where) {
        if (op instanceof RuntimeReduceOp.Builtin b) {
            return b;
        }
        throw new CommException(where, kind + ": NCCL reduces with SUM, PROD, MIN and MAX only, not the custom "
                + "operator '" + op.name() + "'");
    }

    /** Ends the open group, then queues a collective ({@code call}, NCCL's {@code function}) and checks it. */
    private void collective(CommOp.Kind op, SourceLocation where, IntSupplier call,
                            String function) {
        closeGroup(op.label(), where);
        handle.check(call.getAsInt(), function, op.label(), where);
        handle.checkAsync(op.label(), where);
    }

    private void enqueueSend(long buf, DType dtype, long count, int dest, CommOp.Kind op, SourceLocation where) {
        handle.check(handle.nccl.send(buf, count, NcclLibrary.dataType(dtype), dest, handle.live(where), stream),
                "ncclSend", op.label(), where);
    }

    private void enqueueRecv(long buf, DType dtype, long count, int src, CommOp.Kind op, SourceLocation where) {
        handle.check(handle.nccl.recv(buf, count, NcclLibrary.dataType(dtype), src, handle.live(where), stream),
                "ncclRecv", op.label(), where);
    }

    private Request pending(Group g, CommOp.Kind op, SourceLocation where) {
        Request r = new Request(handle, op, stream, where);
        g.requests.add(r);
        return r;
    }

    /**
     * Runs {@code calls} (NCCL point-to-point enqueues) in this thread's open group, starting one if none is open.
     * If a call fails the group is ended and dropped, so that the next operation starts clean.
     */
    private Group inGroup(CommOp.Kind op, SourceLocation where, Runnable calls) {
        Group g = OPEN_GROUP.get();
        if (g == null) {
            handle.check(handle.nccl.groupStart(), "ncclGroupStart", op.label(), where);
            g = new Group();
            OPEN_GROUP.set(g);
        }
        try {
            calls.run();
        } catch (RuntimeException e) {
            OPEN_GROUP.remove();
            handle.nccl.groupEnd();
            throw e;
        }
        g.add(handle, op, where);
        return g;
    }

    /**
     * Ends this thread's open group, if any ({@code ncclGroupEnd}), then records an event per request of the group
     * on the request's stream and checks every communicator of the group for asynchronous errors.
     */
    private static void closeGroup(String op, SourceLocation where) {
        Group g = OPEN_GROUP.get();
        if (g == null) {
            return;
        }
        OPEN_GROUP.remove();
        NcclLibrary nccl = g.comms.getFirst().nccl;
        int rc = nccl.groupEnd();
        if (rc != NcclLibrary.SUCCESS) {
            throw new CommException(where, op + ": ncclGroupEnd failed for the group of " + String.join(", ", g.ops)
                    + ": " + nccl.describe(rc));
        }
        for (Request r : g.requests) {
            r.event = r.owner.events.record(r.stream);
        }
        for (NcclHandle c : g.comms) {
            c.checkAsync(op, where);
        }
    }

    @Override
    public String toString() {
        return "nccl:" + handle.name + "#" + handle.rank;
    }
}
