package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One rank's NCCL communicator, created over a bootstrap {@link Communicator} (MPI or fake) with the same ranks:
 * rank 0 makes the unique id, the bootstrap broadcasts its 128 bytes, and every rank calls
 * {@code ncclCommInitRank(size, id, rank)} (as IREE's MPI channel provider does).
 *
 * <p>Every operation only enqueues work on the given CUDA stream; nothing here waits for the GPU. Buffers are
 * device pointers holding {@code count} elements of a {@link DType}; the semantics are {@link Communicator}'s,
 * with two differences: NCCL has no tags, so point-to-point messages between two ranks match in posting order,
 * and a "completed" operation is one whose work is queued ahead of whatever is queued next on its stream.
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
public final class NcclCommunicator implements AutoCloseable {
    private static final ThreadLocal<Group> OPEN_GROUP = new ThreadLocal<>();

    private final NcclLibrary nccl;
    private final StreamEvents events;
    private final String name;
    private final int rank;
    private final int size;
    private long comm;

    private NcclCommunicator(NcclLibrary nccl, StreamEvents events, String name, int rank, int size, long comm) {
        this.nccl = nccl;
        this.events = events;
        this.name = name;
        this.rank = rank;
        this.size = size;
        this.comm = comm;
    }

    /**
     * Collective over {@code bootstrap}: the NCCL communicator with its ranks. The CUDA device this rank uses must
     * be current on the calling thread.
     */
    public static NcclCommunicator create(NcclLibrary nccl, StreamEvents events, Communicator bootstrap,
                                          SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(NcclLibrary.UNIQUE_ID_BYTES);
            if (bootstrap.rank() == 0) {
                nccl.check(nccl.getUniqueId(id), "ncclGetUniqueId", "nccl init", where);
            }
            bootstrap.bcast(id, DType.BOOL, NcclLibrary.UNIQUE_ID_BYTES, 0, where);
            MemorySegment handle = arena.allocate(JAVA_LONG);
            nccl.check(nccl.commInitRank(handle, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank",
                    "nccl init", where);
            return new NcclCommunicator(nccl, events, bootstrap.name(), bootstrap.rank(), bootstrap.size(),
                    handle.get(JAVA_LONG, 0));
        }
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    /** The bootstrap communicator's name. */
    public String name() {
        return name;
    }

    /** A nonblocking send or receive: completed on the GPU once the event its group recorded has fired. */
    public static final class Request {
        private final NcclCommunicator owner;
        private final String op;
        private final long stream;
        private final SourceLocation where;
        private long event;
        private boolean waited;

        private Request(NcclCommunicator owner, String op, long stream, SourceLocation where) {
            this.owner = owner;
            this.op = op;
            this.stream = stream;
            this.where = where;
        }

        @Override
        public String toString() {
            return op + " at " + where;
        }
    }

    /** The group of point-to-point calls this thread has open, and the requests it will complete. */
    private static final class Group {
        final List<String> ops = new ArrayList<>();
        final List<Request> requests = new ArrayList<>();
        final List<NcclCommunicator> comms = new ArrayList<>();
        SourceLocation first;

        void add(NcclCommunicator c, String op, SourceLocation where) {
            if (first == null) {
                first = where;
            }
            ops.add(op + " at " + where);
            if (!comms.contains(c)) {
                comms.add(c);
            }
        }
    }

    /** {@code ncclAllReduce}: {@code out = in_0 ⊕ ... ⊕ in_{size-1}} on every rank. */
    public void allreduce(long in, long out, DType dtype, long count, RuntimeReduceOp.Builtin op, long stream,
                          SourceLocation where) {
        closeGroup("allreduce", where);
        check(nccl.allReduce(in, out, count, NcclLibrary.dataType(dtype), NcclLibrary.reduceOp(op), live(where),
                stream), "ncclAllReduce", "allreduce", where);
        checkAsync("allreduce", where);
    }

    /** {@code ncclAllGather}: {@code out} ({@code size * countPerRank} elements) gets every rank's {@code in}. */
    public void allgather(long in, long out, DType dtype, long countPerRank, long stream, SourceLocation where) {
        closeGroup("allgather", where);
        check(nccl.allGather(in, out, countPerRank, NcclLibrary.dataType(dtype), live(where), stream),
                "ncclAllGather", "allgather", where);
        checkAsync("allgather", where);
    }

    /** {@code ncclReduceScatter}: block {@code rank} ({@code countPerRank} elements) of the reduction of {@code in}. */
    public void reduceScatter(long in, long out, DType dtype, long countPerRank, RuntimeReduceOp.Builtin op, long stream,
                              SourceLocation where) {
        closeGroup("reduce_scatter", where);
        check(nccl.reduceScatter(in, out, countPerRank, NcclLibrary.dataType(dtype), NcclLibrary.reduceOp(op),
                live(where), stream), "ncclReduceScatter", "reduce_scatter", where);
        checkAsync("reduce_scatter", where);
    }

    /** {@code ncclBroadcast}: every rank's {@code out} receives {@code root}'s {@code in} (root's too). */
    public void bcast(long in, long out, DType dtype, long count, int root, long stream, SourceLocation where) {
        closeGroup("bcast", where);
        check(nccl.broadcast(in, out, count, NcclLibrary.dataType(dtype), root, live(where), stream),
                "ncclBroadcast", "bcast", where);
        checkAsync("bcast", where);
    }

    /** {@code ncclReduce}: like {@link #allreduce}, but only {@code root}'s {@code out} is written. */
    public void reduce(long in, long out, DType dtype, long count, RuntimeReduceOp.Builtin op, int root, long stream,
                       SourceLocation where) {
        closeGroup("reduce", where);
        check(nccl.reduce(in, out, count, NcclLibrary.dataType(dtype), NcclLibrary.reduceOp(op), root, live(where),
                stream), "ncclReduce", "reduce", where);
        checkAsync("reduce", where);
    }

    /**
     * Block {@code j} of {@code in} goes to rank {@code j} and arrives as block {@code rank} of its {@code out}:
     * one {@code ncclSend} and one {@code ncclRecv} per rank, in the open group, which it then ends.
     */
    public void alltoall(long in, long out, DType dtype, long countPerRank, long stream, SourceLocation where) {
        long blockBytes = countPerRank * dtype.byteSize();
        inGroup("alltoall", where, () -> {
            for (int peer = 0; peer < size; peer++) {
                enqueueSend(in + peer * blockBytes, dtype, countPerRank, peer, stream, "alltoall", where);
                enqueueRecv(out + peer * blockBytes, dtype, countPerRank, peer, stream, "alltoall", where);
            }
        });
        closeGroup("alltoall", where);
    }

    /**
     * {@code ncclSend} of {@code count} elements to {@code dest}, joining the open group; {@code buf} must stay
     * unchanged until the group ends.
     */
    public void send(long buf, DType dtype, long count, int dest, long stream, SourceLocation where) {
        inGroup("send", where, () -> enqueueSend(buf, dtype, count, dest, stream, "send", where));
    }

    /** {@code ncclRecv} of {@code count} elements from {@code src}, joining the open group: complete once it ends. */
    public void recv(long buf, DType dtype, long count, int src, long stream, SourceLocation where) {
        inGroup("recv", where, () -> enqueueRecv(buf, dtype, count, src, stream, "recv", where));
    }

    /** A send to {@code dest} and a receive from {@code src} in the open group, as {@link #send}, {@link #recv}. */
    public void sendrecv(long sendBuf, long sendCount, int dest, long recvBuf, long recvCount, int src, DType dtype,
                         long stream, SourceLocation where) {
        inGroup("sendrecv", where, () -> {
            enqueueSend(sendBuf, dtype, sendCount, dest, stream, "sendrecv", where);
            enqueueRecv(recvBuf, dtype, recvCount, src, stream, "sendrecv", where);
        });
    }

    /** Joins a send to the open group (opening one if needed); {@code buf} must stay unchanged until {@link #wait}. */
    public Request isend(long buf, DType dtype, long count, int dest, long stream, SourceLocation where) {
        Group g = inGroup("isend", where, () -> enqueueSend(buf, dtype, count, dest, stream, "isend", where));
        return pending(g, "isend", stream, where);
    }

    /** Joins a receive into {@code buf} to the open group; {@code buf} holds the message after {@link #wait}. */
    public Request irecv(long buf, DType dtype, long count, int src, long stream, SourceLocation where) {
        Group g = inGroup("irecv", where, () -> enqueueRecv(buf, dtype, count, src, stream, "irecv", where));
        return pending(g, "irecv", stream, where);
    }

    /**
     * Makes work queued on {@code stream} from now on wait for {@code request}, closing its group first if it is
     * still open. A request is waited once, on its own communicator.
     */
    public void wait(Request request, long stream, SourceLocation where) {
        if (request.owner != this) {
            throw new CommException(where, "wait: " + request + " belongs to communicator '" + request.owner.name
                    + "', not '" + name + "'");
        }
        if (request.waited) {
            throw new CommException(where, "wait: " + request + " was already waited");
        }
        if (request.event == 0) {
            closeGroup("wait", where);
        }
        if (request.event == 0) {
            throw new CommException(where, "wait: " + request + " never started: its NCCL group failed");
        }
        request.waited = true;
        events.wait(stream, request.event);
        events.destroy(request.event);
    }

    /**
     * Ends this thread's open NCCL group, if any, queueing its transfers and recording the events of its requests.
     * A failure names the line of the group's first operation.
     */
    public static void flush() {
        Group g = OPEN_GROUP.get();
        if (g != null) {
            g.comms.getFirst().closeGroup("flush", g.first);
        }
    }

    /** {@code ncclCommDestroy}; this communicator cannot be used afterwards. */
    @Override
    public void close() {
        if (comm != 0) {
            long c = comm;
            comm = 0;
            check(nccl.commDestroy(c), "ncclCommDestroy", "free", SourceLocation.UNKNOWN);
        }
    }

    private void enqueueSend(long buf, DType dtype, long count, int dest, long stream, String op,
                             SourceLocation where) {
        check(nccl.send(buf, count, NcclLibrary.dataType(dtype), dest, live(where), stream), "ncclSend", op, where);
    }

    private void enqueueRecv(long buf, DType dtype, long count, int src, long stream, String op,
                             SourceLocation where) {
        check(nccl.recv(buf, count, NcclLibrary.dataType(dtype), src, live(where), stream), "ncclRecv", op, where);
    }

    private Request pending(Group g, String op, long stream, SourceLocation where) {
        Request r = new Request(this, op, stream, where);
        g.requests.add(r);
        return r;
    }

    /**
     * Runs {@code calls} (NCCL point-to-point enqueues) in this thread's open group, starting one if none is open.
     * If a call fails the group is ended and dropped, so that the next operation starts clean.
     */
    private Group inGroup(String op, SourceLocation where, Runnable calls) {
        Group g = OPEN_GROUP.get();
        if (g == null) {
            check(nccl.groupStart(), "ncclGroupStart", op, where);
            g = new Group();
            OPEN_GROUP.set(g);
        }
        try {
            calls.run();
        } catch (RuntimeException e) {
            OPEN_GROUP.remove();
            nccl.groupEnd();
            throw e;
        }
        g.add(this, op, where);
        return g;
    }

    /**
     * Ends this thread's open group, if any ({@code ncclGroupEnd}), then records an event per request of the group
     * and checks every communicator of the group for asynchronous errors.
     */
    private void closeGroup(String op, SourceLocation where) {
        Group g = OPEN_GROUP.get();
        if (g == null) {
            return;
        }
        OPEN_GROUP.remove();
        int rc = nccl.groupEnd();
        if (rc != NcclLibrary.SUCCESS) {
            throw new CommException(where, op + ": ncclGroupEnd failed for the group of " + String.join(", ", g.ops)
                    + ": " + nccl.describe(rc));
        }
        for (Request r : g.requests) {
            r.event = events.record(r.stream);
        }
        for (NcclCommunicator c : g.comms) {
            c.checkAsync(op, where);
        }
    }

    /** Raises an asynchronous NCCL error as an exception naming {@code op} and {@code where}, aborting first. */
    private void checkAsync(String op, SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            check(nccl.commGetAsyncError(live(where), error), "ncclCommGetAsyncError", op, where);
            int async = error.get(JAVA_INT, 0);
            if (async != NcclLibrary.SUCCESS && async != NcclLibrary.IN_PROGRESS) {
                long c = comm;
                comm = 0;
                nccl.commAbort(c);
                throw new CommException(where, op + ": NCCL communicator '" + name + "' failed asynchronously: "
                        + nccl.describe(async) + "; the communicator was aborted");
            }
        }
    }

    private void check(int result, String function, String op, SourceLocation where) {
        nccl.check(result, function, op, where);
    }

    /** The NCCL handle; fails when the communicator was destroyed or aborted. */
    private long live(SourceLocation where) {
        if (comm == 0) {
            throw new CommException(where, "NCCL communicator '" + name + "' was destroyed or aborted");
        }
        return comm;
    }

    @Override
    public String toString() {
        return "nccl:" + name + "#" + rank;
    }
}
