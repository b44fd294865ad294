package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommChecks;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.MessageMismatchException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.comm.Comm;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One rank's handle on a fake communicator. Sends copy their buffer when posted and complete when a receive
 * matches the message ({@code MPI_Ssend}), unless the world buffers messages that small
 * ({@link FakeSettings#eagerLimit()}); receives and collectives block through the {@link WorldMonitor}. A rank
 * only reads and writes its own buffers, on the threads its thread level lets communicate.
 */
final class FakeCommunicator implements Communicator {
    private final WorldMonitor monitor;
    private final CommGroup group;
    private final int rank;
    private final int worldRank;
    private final boolean isWorld;
    private long collectives;
    private SourceLocation freedAt;

    FakeCommunicator(WorldMonitor monitor, CommGroup group, int rank, boolean isWorld) {
        this.monitor = monitor;
        this.group = group;
        this.rank = rank;
        this.worldRank = group.worldRanks[rank];
        this.isWorld = isWorld;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return group.size();
    }

    @Override
    public String name() {
        return group.name;
    }

    @Override
    public void barrier(SourceLocation where) {
        live("barrier", where);
        collective(CollectiveCall.of(CommOp.Kind.BARRIER, where), null, null);
    }

    @Override
    public void send(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        complete(postSend("send", buf, dtype, count, dest, tag, where), "send", where);
    }

    @Override
    public PendingRequest isend(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        return monitor.requests(worldRank).start("isend", name(), where,
                () -> postSend("isend", buf, dtype, count, dest, tag, where));
    }

    @Override
    public void recv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        complete(postRecv("recv", buf, dtype, count, src, tag, where), "recv", where);
    }

    @Override
    public void recvAny(MemorySegment buf, DType dtype, long count, int src, int tag, MemorySegment status,
                        SourceLocation where) {
        String op = CommOp.Kind.RECV_ANY.label();
        live(op, where);
        CommChecks.sourceOrAny(this, op, src, where);
        CommChecks.tagOrAny(this, op, tag, where);
        CommChecks.buffer(this, op, "receive", buf, dtype, count, where);
        CommChecks.buffer(this, op, "status", status, DType.I32, 2, where);
        FakeRequest r = new FakeRequest(this, FakeRequest.Kind.RECV, buf, dtype, count, src, tag, where, false);
        post(r);
        Message m = await(r, op, where);
        status.set(ValueLayout.JAVA_INT, 0, m.source());
        status.set(ValueLayout.JAVA_INT, 4, m.tag());
        take(r, m, where);
    }

    @Override
    public PendingRequest irecv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        return monitor.requests(worldRank).start("irecv", name(), where,
                () -> postRecv("irecv", buf, dtype, count, src, tag, where));
    }

    @Override
    public void wait(PendingRequest request, SourceLocation where) {
        live("wait", where);
        if (request instanceof FakeCollectiveRequest c && c.owner == this) {
            finish(c, where);
            return;
        }
        if (!(request instanceof FakeRequest r) || r.owner != this) {
            throw new CommException(where, String.format("wait on '%s' (rank %d): %s was not started by this "
                    + "communicator handle", name(), rank, request == null ? "null request" : request.describe()));
        }
        SourceLocation before;
        monitor.lock.lock();
        try {
            before = r.markWaited(where);
        } finally {
            monitor.lock.unlock();
        }
        if (before != null) {
            throw new CommException(where, String.format("wait on '%s': %s was already waited at %s",
                    name(), r.describe(), before));
        }
        monitor.requests(worldRank).waited(r);
        complete(r, "wait", where);
    }

    @Override
    public void sendrecv(MemorySegment sendbuf, DType dtype, long count, int dest, int sendtag,
                         MemorySegment recvbuf, long recvcount, int src, int recvtag, SourceLocation where) {
        live("sendrecv", where);
        CommChecks.peer(this, "sendrecv", "source", src, where);
        CommChecks.tag(this, "sendrecv", recvtag, where);
        CommChecks.buffer(this, "sendrecv", "receive", recvbuf, dtype, recvcount, where);
        FakeRequest send = postSend("sendrecv", sendbuf, dtype, count, dest, sendtag, where);
        complete(postRecv("sendrecv", recvbuf, dtype, recvcount, src, recvtag, where), "sendrecv", where);
        complete(send, "sendrecv", where);
    }

    @Override
    public void allreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                          SourceLocation where) {
        live("allreduce", where);
        CommChecks.reduceOp(this, "allreduce", op, dtype, where);
        long bytes = CommChecks.buffer(this, "allreduce", "input", in, dtype, count, where);
        CommChecks.buffer(this, "allreduce", "output", out, dtype, count, where);
        // Alone in its group, a rank's contribution is the result: no private copy (a fresh buffer per call).
        Object result = collective(new CollectiveCall(CommOp.Kind.ALLREDUCE, dtype, count, -1, op.name(),
                where), op, size() == 1 ? in : Collectives.copyOf(in, bytes));
        if (((MemorySegment) result).address() != out.address()) {
            MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
        }
    }

    @Override
    public void allgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        live("allgather", where);
        long bytes = CommChecks.buffer(this, "allgather", "input", in, dtype, countPerRank, where);
        long outBytes = CommChecks.buffer(this, "allgather", "output", out, dtype, total(countPerRank, where), where);
        Object result = collective(new CollectiveCall(CommOp.Kind.ALLGATHER, dtype, countPerRank, -1, null,
                where), null, Collectives.copyOf(in, bytes));
        MemorySegment.copy((MemorySegment) result, 0, out, 0, outBytes);
    }

    @Override
    public void allgatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, SourceLocation where) {
        live("allgatherv", where);
        long total = CommChecks.counts(this, "allgatherv", "counts", counts, where);
        long bytes = CommChecks.buffer(this, "allgatherv", "input", in, dtype, counts[rank], where);
        long outBytes = CommChecks.buffer(this, "allgatherv", "output", out, dtype, total, where);
        Object result = collective(CollectiveCall.counted(CommOp.Kind.ALLGATHERV, dtype, counts, -1, where), null,
                Collectives.copyOf(in, bytes));
        MemorySegment.copy((MemorySegment) result, 0, out, 0, outBytes);
    }

    @Override
    public void gatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                        SourceLocation where) {
        live("gatherv", where);
        CommChecks.peer(this, "gatherv", "root", root, where);
        long total = CommChecks.counts(this, "gatherv", "counts", counts, where);
        long bytes = CommChecks.buffer(this, "gatherv", "input", in, dtype, counts[rank], where);
        long outBytes = rank == root ? CommChecks.buffer(this, "gatherv", "output", out, dtype, total, where) : 0;
        Object result = collective(CollectiveCall.counted(CommOp.Kind.GATHERV, dtype, counts, root, where), null,
                Collectives.copyOf(in, bytes));
        if (rank == root) {
            MemorySegment.copy((MemorySegment) result, 0, out, 0, outBytes);
        }
    }

    @Override
    public void scatterv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                         SourceLocation where) {
        live("scatterv", where);
        CommChecks.peer(this, "scatterv", "root", root, where);
        long total = CommChecks.counts(this, "scatterv", "counts", counts, where);
        long inBytes = rank == root ? CommChecks.buffer(this, "scatterv", "input", in, dtype, total, where) : 0;
        long bytes = CommChecks.buffer(this, "scatterv", "output", out, dtype, counts[rank], where);
        Object result = collective(CollectiveCall.counted(CommOp.Kind.SCATTERV, dtype, counts, root, where), null,
                rank == root ? Collectives.copyOf(in, inBytes) : null);
        MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
    }

    @Override
    public void alltoallv(MemorySegment in, MemorySegment out, DType dtype, long[] sendCounts, long[] recvCounts,
                          SourceLocation where) {
        live("alltoallv", where);
        long sent = CommChecks.counts(this, "alltoallv", "sendCounts", sendCounts, where);
        long received = CommChecks.counts(this, "alltoallv", "recvCounts", recvCounts, where);
        long bytes = CommChecks.buffer(this, "alltoallv", "input", in, dtype, sent, where);
        long outBytes = CommChecks.buffer(this, "alltoallv", "output", out, dtype, received, where);
        // the counts differ by rank: the call agrees on the dtype, the payload carries them to be matched up
        Object result = collective(new CollectiveCall(CommOp.Kind.ALLTOALLV, dtype, -1, -1, null, where), null,
                new Collectives.Exchange(sendCounts.clone(), recvCounts.clone(), Collectives.copyOf(in, bytes)));
        MemorySegment.copy((MemorySegment) result, 0, out, 0, outBytes);
    }

    @Override
    public void reduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                              SourceLocation where) {
        live("reduce_scatter", where);
        CommChecks.reduceOp(this, "reduce_scatter", op, dtype, where);
        long inBytes = CommChecks.buffer(this, "reduce_scatter", "input", in, dtype, total(countPerRank, where), where);
        long bytes = CommChecks.buffer(this, "reduce_scatter", "output", out, dtype, countPerRank, where);
        Object result = collective(new CollectiveCall(CommOp.Kind.REDUCE_SCATTER, dtype, countPerRank, -1,
                op.name(), where), op, Collectives.copyOf(in, inBytes));
        MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
    }

    @Override
    public void bcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        live("bcast", where);
        CommChecks.peer(this, "bcast", "root", root, where);
        long bytes = CommChecks.buffer(this, "bcast", "broadcast", buf, dtype, count, where);
        Object result = collective(new CollectiveCall(CommOp.Kind.BCAST, dtype, count, root, null, where),
                null, rank == root ? Collectives.copyOf(buf, bytes) : null);
        if (rank != root) {
            MemorySegment.copy((MemorySegment) result, 0, buf, 0, bytes);
        }
    }

    @Override
    public void reduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, int root,
                       SourceLocation where) {
        live("reduce", where);
        CommChecks.peer(this, "reduce", "root", root, where);
        CommChecks.reduceOp(this, "reduce", op, dtype, where);
        long bytes = CommChecks.buffer(this, "reduce", "input", in, dtype, count, where);
        if (rank == root) {
            CommChecks.buffer(this, "reduce", "output", out, dtype, count, where);
        }
        Object result = collective(new CollectiveCall(CommOp.Kind.REDUCE, dtype, count, root, op.name(),
                where), op, Collectives.copyOf(in, bytes));
        if (rank == root) {
            MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
        }
    }

    @Override
    public void alltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        live("alltoall", where);
        long total = total(countPerRank, where);
        long bytes = CommChecks.buffer(this, "alltoall", "input", in, dtype, total, where);
        CommChecks.buffer(this, "alltoall", "output", out, dtype, total, where);
        Object result = collective(new CollectiveCall(CommOp.Kind.ALLTOALL, dtype, countPerRank, -1, null,
                where), null, Collectives.copyOf(in, bytes));
        MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
    }

    @Override
    public PendingRequest iallreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                              SourceLocation where) {
        live("iallreduce", where);
        CommChecks.reduceOp(this, "iallreduce", op, dtype, where);
        long bytes = CommChecks.buffer(this, "iallreduce", "input", in, dtype, count, where);
        CommChecks.buffer(this, "iallreduce", "output", out, dtype, count, where);
        return start(new CollectiveCall(CommOp.Kind.IALLREDUCE, dtype, count, -1, op.name(), where), op,
                Collectives.copyOf(in, bytes), FakeCollectiveRequest.into(out, bytes));
    }

    @Override
    public PendingRequest iallgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                              SourceLocation where) {
        live("iallgather", where);
        long bytes = CommChecks.buffer(this, "iallgather", "input", in, dtype, countPerRank, where);
        long outBytes = CommChecks.buffer(this, "iallgather", "output", out, dtype, total(countPerRank, where), where);
        return start(new CollectiveCall(CommOp.Kind.IALLGATHER, dtype, countPerRank, -1, null, where), null,
                Collectives.copyOf(in, bytes), FakeCollectiveRequest.into(out, outBytes));
    }

    @Override
    public PendingRequest ireduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                                  SourceLocation where) {
        live("ireduce_scatter", where);
        CommChecks.reduceOp(this, "ireduce_scatter", op, dtype, where);
        long inBytes = CommChecks.buffer(this, "ireduce_scatter", "input", in, dtype, total(countPerRank, where),
                where);
        long bytes = CommChecks.buffer(this, "ireduce_scatter", "output", out, dtype, countPerRank, where);
        return start(new CollectiveCall(CommOp.Kind.IREDUCE_SCATTER, dtype, countPerRank, -1, op.name(), where), op,
                Collectives.copyOf(in, inBytes), FakeCollectiveRequest.into(out, bytes));
    }

    @Override
    public PendingRequest ibcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        live("ibcast", where);
        CommChecks.peer(this, "ibcast", "root", root, where);
        long bytes = CommChecks.buffer(this, "ibcast", "broadcast", buf, dtype, count, where);
        return start(new CollectiveCall(CommOp.Kind.IBCAST, dtype, count, root, null, where), null,
                rank == root ? Collectives.copyOf(buf, bytes) : null,
                rank == root ? result -> { } : FakeCollectiveRequest.into(buf, bytes));
    }

    @Override
    public PendingRequest ialltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                             SourceLocation where) {
        live("ialltoall", where);
        long total = total(countPerRank, where);
        long bytes = CommChecks.buffer(this, "ialltoall", "input", in, dtype, total, where);
        CommChecks.buffer(this, "ialltoall", "output", out, dtype, total, where);
        return start(new CollectiveCall(CommOp.Kind.IALLTOALL, dtype, countPerRank, -1, null, where), null,
                Collectives.copyOf(in, bytes), FakeCollectiveRequest.into(out, bytes));
    }

    @Override
    public PendingRequest ibarrier(SourceLocation where) {
        live("ibarrier", where);
        return start(CollectiveCall.of(CommOp.Kind.IBARRIER, where), null, null, result -> { });
    }

    @Override
    public Communicator split(int color, int key, SourceLocation where) {
        live("split", where);
        CommChecks.color(this, color, where);
        return handle((Membership) collective(CollectiveCall.of(CommOp.Kind.SPLIT, where), null,
                new int[] {color, key}));
    }

    @Override
    public Communicator dup(SourceLocation where) {
        live("dup", where);
        return handle((Membership) collective(CollectiveCall.of(CommOp.Kind.DUP, where), null, null));
    }

    /** Fails as {@code op} itself would when this thread may not communicate now; then exchanges on {@code dup}. */
    @Override
    public void checkExchange(Communicator dup, MemorySegment in, MemorySegment out, long longs, CommOp.Kind op,
                              DType dtype, long count, String reduce, int root, SourceLocation where) {
        live(op.label(), where);
        dup.allreduce(in, out, DType.I64, longs, RuntimeReduceOp.MAX, where);
    }

    /** No collective: the ranks' handles share their group in-process ({@link CommGroup#checks}). */
    @Override
    public Communicator privateDup(SourceLocation where) {
        live("dup", where);
        monitor.lock.lock();
        try {
            return new FakeCommunicator(monitor, group.checks(), rank, false);
        } finally {
            monitor.lock.unlock();
        }
    }

    @Override
    public void free(SourceLocation where) {
        live("free", where);
        if (isWorld) {
            throw new CommException(where, "free: the world communicator cannot be freed");
        }
        freedAt = where;
    }

    @Override
    public String toString() {
        return "rank " + rank + " of '" + name() + "'";
    }

    private Communicator handle(Membership m) {
        return new FakeCommunicator(monitor, m.group(), m.rank(), false);
    }

    /** Fails when the communicator was freed or the calling thread may not communicate for this rank now. */
    private void live(String op, SourceLocation where) {
        if (freedAt != null) {
            throw new CommException(where, String.format("%s on '%s': the communicator was freed at %s",
                    op, name(), freedAt));
        }
        monitor.checkThread(worldRank, op, name(), where);
    }

    private long total(long countPerRank, SourceLocation where) {
        try {
            return Math.multiplyExact(countPerRank, size());
        } catch (ArithmeticException e) {
            throw new CommException(where, String.format("count %d per rank is too large", countPerRank));
        }
    }

    private FakeRequest postSend(String op, MemorySegment buf, DType dtype, long count, int dest, int tag,
                                 SourceLocation where) {
        live(op, where);
        CommChecks.peer(this, op, "destination", dest, where);
        CommChecks.tag(this, op, tag, where);
        long bytes = CommChecks.buffer(this, op, "send", buf, dtype, count, where);
        FakeRequest r = new FakeRequest(this, FakeRequest.Kind.SEND, buf, dtype, count, dest, tag, where,
                monitor.settings().buffers(bytes));
        Message m = new Message(rank, tag, dtype, count, Collectives.copyOf(buf, bytes), where, r);
        monitor.lock.lock();
        try {
            group.mailbox(dest).deliver(m);
            monitor.changed();
        } finally {
            monitor.lock.unlock();
        }
        return r;
    }

    private FakeRequest postRecv(String op, MemorySegment buf, DType dtype, long count, int src, int tag,
                                 SourceLocation where) {
        live(op, where);
        CommChecks.peer(this, op, "source", src, where);
        CommChecks.tag(this, op, tag, where);
        CommChecks.buffer(this, op, "receive", buf, dtype, count, where);
        FakeRequest r = new FakeRequest(this, FakeRequest.Kind.RECV, buf, dtype, count, src, tag, where, false);
        post(r);
        return r;
    }

    /** Posts receive {@code r} to this rank's mailbox. */
    private void post(FakeRequest r) {
        monitor.lock.lock();
        try {
            group.mailbox(rank).post(r);
            // Posting may match a message whose sender blocks until it is received: wake it now, not at the poll.
            monitor.changed();
        } finally {
            monitor.lock.unlock();
        }
    }

    /**
     * Blocks until {@code r} is complete; for a receive, then checks that the message fits and copies it into the
     * receive buffer.
     */
    private void complete(FakeRequest r, String op, SourceLocation where) {
        Message m = await(r, op, where);
        if (r.kind == FakeRequest.Kind.SEND) {
            return;
        }
        take(r, m, where);
    }

    /** Blocks until {@code r} is complete; returns its message (null for a buffered send). */
    private Message await(FakeRequest r, String op, SourceLocation where) {
        monitor.lock.lock();
        try {
            if (!r.complete()) {
                monitor.await(worldRank, waitFor(r, op, where));
            }
            return r.matched();
        } finally {
            monitor.lock.unlock();
        }
    }

    /** Checks that the message {@code m} of receive {@code r} fits and copies it into the receive buffer. */
    private void take(FakeRequest r, Message m, SourceLocation where) {
        if (m.dtype() != r.dtype || m.count() != r.count) {
            throw new MessageMismatchException(where, String.format(
                    "message size mismatch on '%s': rank %d receives %d x %s from %s at %s, "
                            + "but rank %d sent %d x %s to it at %s",
                    name(), rank, r.count, r.dtype.specName(), r.peerAndTag(), r.where,
                    m.source(), m.count(), m.dtype().specName(), m.where()));
        }
        MemorySegment.copy(m.data(), 0, r.buf, 0, m.data().byteSize());
    }

    private Wait waitFor(FakeRequest r, String op, SourceLocation where) {
        boolean send = r.kind == FakeRequest.Kind.SEND;
        String what = op.equals("wait") ? "wait for " + r.describe()
                : String.format("%s(%d x %s) on '%s' %s %s", op, r.count, r.dtype.specName(), name(),
                        send ? "to" : "from", r.peerAndTag());
        String hint = send ? String.format("note: a blocked send waits for a matching receive: MPI does not promise "
                + "to buffer sends, and fake ranks buffer only those of at most -Dweft.fake.eagerLimit=<bytes> (now "
                + "%d); exchange with sendrecv, or start isend and irecv and then wait for both",
                monitor.settings().eagerLimit()) : null;
        // a wildcard awaits no one rank: it fails as a deadlock once no rank can send it anything
        int[] peer = r.peer == Comm.ANY_SOURCE ? new int[0] : new int[] {group.worldRanks[r.peer]};
        return new Wait() {
            @Override
            public boolean ready() {
                return r.complete();
            }

            @Override
            public int[] awaitedWorldRanks() {
                return peer;
            }

            @Override
            public String describe() {
                return what;
            }

            @Override
            public SourceLocation where() {
                return where;
            }

            @Override
            public String hint() {
                return hint;
            }
        };
    }

    /**
     * Joins this rank's next collective on the communicator without waiting for the others (the last to arrive
     * computes every rank's result); the request's wait ({@link #finish}) blocks until the round is done.
     */
    private PendingRequest start(CollectiveCall call, RuntimeReduceOp op, Object payload, FakeCollectiveRequest.Delivery delivery) {
        return monitor.requests(worldRank).start(call.kind().label(), name(), call.where(), () -> {
            long seq = ++collectives;
            monitor.lock.lock();
            try {
                return new FakeCollectiveRequest(this, arrive(seq, call, op, payload), call, seq, delivery);
            } finally {
                monitor.lock.unlock();
            }
        });
    }

    /**
     * Arrives at round {@code seq} of the communicator's collectives, the monitor's lock held; the last rank to
     * arrive computes every rank's result.
     */
    private CollectiveRound arrive(long seq, CollectiveCall call, RuntimeReduceOp op, Object payload) {
        CollectiveRound round = group.round(seq);
        if (round.arrive(rank, call, op, payload)) {
            round.compute(monitor.lock);
        }
        monitor.changed();
        return round;
    }

    /** Waits for the round of the nonblocking collective {@code r} and delivers this rank's result. */
    private void finish(FakeCollectiveRequest r, SourceLocation where) {
        Object result;
        monitor.lock.lock();
        try {
            SourceLocation before = r.markWaited(where);
            if (before != null) {
                throw new CommException(where, String.format("wait on '%s': %s was already waited at %s",
                        name(), r.describe(), before));
            }
            monitor.requests(worldRank).waited(r);
            monitor.await(worldRank, r.round.waitFor(r.call));
            result = r.round.depart(rank, where);
        } finally {
            monitor.lock.unlock();
        }
        r.delivery.deliver(result);
    }

    /** Joins this rank's next collective on the communicator, blocks until it completes, and returns its result. */
    private Object collective(CollectiveCall call, RuntimeReduceOp op, Object payload) {
        long seq = ++collectives;
        monitor.lock.lock();
        try {
            CollectiveRound round = arrive(seq, call, op, payload);
            monitor.await(worldRank, round.waitFor(call));
            return round.depart(rank, call.where());
        } finally {
            monitor.lock.unlock();
        }
    }
}
