package dev.weft.backends.comm.mpi;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.backends.comm.CommChecks;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.MessageMismatchException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongToIntFunction;
import java.util.function.ToIntFunction;
import java.util.function.Supplier;

/**
 * One process's handle on an MPI communicator. Buffers go to MPI by address (zero copy) and must be native
 * segments; a reducing collective whose {@code in} and {@code out} start at the same address runs with
 * {@code MPI_IN_PLACE}, and other overlapping buffers are copied first. Every communicator returns errors
 * ({@code MPI_ERRORS_RETURN}); a non-zero code becomes a {@link CommException} naming the operation, the
 * communicator, the peer, {@code MPI_Error_string} and the user's source line. A receive that gets fewer
 * elements than it posted fails like the fake's size mismatch; more is MPI's {@code MPI_ERR_TRUNCATE}.
 *
 * <p>Built-in reduce operators are MPI's own ({@code MPI_SUM}, ...): their floating-point association and their
 * handling of NaN and signed zeros in {@code MIN}/{@code MAX} are the library's, and not necessarily the rank-order
 * left fold that {@link RuntimeReduceOp} describes (results are exact whenever every partial result is). Custom
 * operators keep the rank order (see {@link MpiUserOp}).
 *
 * <p>Derived communicators are named like the fake's ({@code world.split(1)#0}, {@code world.dup#2}), so the
 * communicator names in compiled programs agree between the two runtimes.
 */
final class MpiCommunicator implements Communicator {
    private final MpiWorld world;
    private final MpiLibrary mpi;
    private final long handle;
    private final String name;
    private final int rank;
    private final int size;
    private final boolean isWorld;
    private int derived;
    private SourceLocation freedAt;
    /** The nonblocking collectives started and not yet waited, which {@link #progress} tests. */
    private final List<MpiCollectiveRequest> inFlight = new CopyOnWriteArrayList<>();
    private final MemorySegment testFlag = Arena.ofAuto().allocate(ValueLayout.JAVA_INT);
    private final MemorySegment testStatus;

    MpiCommunicator(MpiWorld world, long handle, String name, boolean isWorld) {
        this.world = world;
        this.mpi = world.mpi;
        this.handle = handle;
        this.name = name;
        this.isWorld = isWorld;
        this.testStatus = Arena.ofAuto().allocate(mpi.statusBytes);
        String op = "attach " + name;
        check(mpi.commSetErrhandler(handle, mpi.errorsReturn), op, -1, SourceLocation.UNKNOWN);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(mpi.commRank(handle, v), op, -1, SourceLocation.UNKNOWN);
            this.rank = v.get(ValueLayout.JAVA_INT, 0);
            check(mpi.commSize(handle, v), op, -1, SourceLocation.UNKNOWN);
            this.size = v.get(ValueLayout.JAVA_INT, 0);
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void barrier(SourceLocation where) {
        live("barrier", where);
        check(mpi.barrier(handle), "barrier", -1, where);
    }

    @Override
    public void send(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        int n = p2pArgs("send", "destination", buf, dtype, count, dest, tag, where);
        check(mpi.send(buf, n, mpi.datatype(dtype), dest, tag, handle), "send", dest, where);
    }

    @Override
    public void recv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        int n = p2pArgs("recv", "source", buf, dtype, count, src, tag, where);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(mpi.statusBytes);
            check(mpi.recv(buf, n, mpi.datatype(dtype), src, tag, handle, status), "recv", src, where);
            received(status, dtype, count, src, tag, () -> "recv", where);
        }
    }

    /**
     * {@code MPI_Recv} with the library's wildcards ({@link MpiLibrary#source}, {@link MpiLibrary#tag}); the matched
     * source and tag come from the {@code MPI_Status}, which MPI fills also for a truncated message.
     */
    @Override
    public void recvAny(MemorySegment buf, DType dtype, long count, int src, int tag, MemorySegment status,
                        SourceLocation where) {
        String op = CommOp.Kind.RECV_ANY.label();
        live(op, where);
        CommChecks.sourceOrAny(this, op, src, where);
        CommChecks.tagOrAny(this, op, tag, where);
        CommChecks.buffer(this, op, "receive", buf, dtype, count, where);
        CommChecks.buffer(this, op, "status", status, DType.I32, 2, where);
        requireNative(op, buf, where);
        int n = intCount(op, count, where);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(mpi.statusBytes);
            int rc = mpi.recv(buf, n, mpi.datatype(dtype), mpi.source(src), mpi.tag(tag), handle, st);
            int source = mpi.statusSource(st);
            int got = mpi.statusTag(st);
            status.set(ValueLayout.JAVA_INT, 0, source);
            status.set(ValueLayout.JAVA_INT, 4, got);
            check(rc, op, src, where);
            received(st, dtype, count, source, got, () -> op, where);
        }
    }

    @Override
    public PendingRequest isend(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        int n = p2pArgs("isend", "destination", buf, dtype, count, dest, tag, where);
        return world.requests().start("isend", name, where, () -> {
            MemorySegment cell = Arena.ofAuto().allocate(mpi.handleBytes());
            check(mpi.isend(buf, n, mpi.datatype(dtype), dest, tag, handle, cell), "isend", dest, where);
            return new MpiRequest(this, false, cell, buf, dtype, count, dest, tag, where);
        });
    }

    @Override
    public PendingRequest irecv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        int n = p2pArgs("irecv", "source", buf, dtype, count, src, tag, where);
        return world.requests().start("irecv", name, where, () -> {
            MemorySegment cell = Arena.ofAuto().allocate(mpi.handleBytes());
            check(mpi.irecv(buf, n, mpi.datatype(dtype), src, tag, handle, cell), "irecv", src, where);
            return new MpiRequest(this, true, cell, buf, dtype, count, src, tag, where);
        });
    }

    @Override
    public void wait(PendingRequest request, SourceLocation where) {
        live("wait", where);
        if (!(request instanceof MpiPendingRequest r) || r.owner != this) {
            throw new CommException(where, String.format("wait on '%s' (rank %d): %s was not started by this "
                    + "communicator handle", name, rank, request == null ? "null request" : request.describe()));
        }
        SourceLocation before = r.markWaited(where);
        if (before != null) {
            throw new CommException(where, String.format("wait on '%s': %s was already waited at %s",
                    name, r.describe(), before));
        }
        world.requests().waited(r);
        if (r instanceof MpiCollectiveRequest c) {
            inFlight.remove(c);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(mpi.statusBytes);
            int rc = mpi.waitRequest(r.cell, status);
            r.release();
            if (rc != MpiLibrary.SUCCESS) {
                check(rc, "wait for " + r.describe(), r.peer(), where);
            }
            if (r instanceof MpiRequest p && p.receive) {
                received(status, p.dtype, p.count, p.peer, p.tag, () -> "wait for " + p.describe(), where);
            }
        }
    }

    @Override
    public void sendrecv(MemorySegment sendbuf, DType dtype, long count, int dest, int sendtag,
                         MemorySegment recvbuf, long recvcount, int src, int recvtag, SourceLocation where) {
        int n = p2pArgs("sendrecv", "destination", sendbuf, dtype, count, dest, sendtag, where);
        int m = p2pArgs("sendrecv", "source", recvbuf, dtype, recvcount, src, recvtag, where);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(mpi.statusBytes);
            long t = mpi.datatype(dtype);
            check(mpi.sendrecv(sendbuf, n, t, dest, sendtag, recvbuf, m, t, src, recvtag, handle, status),
                    "sendrecv", src, where);
            received(status, dtype, recvcount, src, recvtag, () -> "sendrecv", where);
        }
    }

    @Override
    public void allreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                          SourceLocation where) {
        bindAllreduce(dtype, count, op, where).accept(in, out);
    }

    /**
     * Checks the reduce operator, the count and the dtype once; a built-in operator's handle is looked up once.
     * Built-in operators skip {@link #reduceCall}: through it, half the JVMs ran a compiled allreduce loop at
     * ~70 instead of ~43 ns per iteration at one rank.
     */
    @Override
    public BufferPairCall bindAllreduce(DType dtype, long count, RuntimeReduceOp op, SourceLocation where) {
        CommChecks.reduceOp(this, "allreduce", op, dtype, where);
        long bytes = CommChecks.bytes(this, "allreduce", dtype, count, where);
        int n = intCount("allreduce", count, where);
        long type = mpi.datatype(dtype);
        if (op instanceof RuntimeReduceOp.Builtin b) {
            return new BuiltinAllreduce(this, dtype, count, bytes, n, type, builtin(b), where);
        }
        return (in, out) -> {
            MemorySegment send = reduceInput("allreduce", in, out, dtype, count, bytes, where);
            reduceCall("allreduce", op, where, o -> mpi.allreduce(send, out, n, type, o, handle));
        };
    }

    /**
     * A bound allreduce with a built-in operator on {@code comm}: one method per call, which checks the buffers and
     * the communicator's state in one condition and calls {@link #reduceInput} only when one fails (which then
     * throws what an eager allreduce would). A compiled loop runs it once per iteration: before the JIT has compiled
     * it, each call interprets a few methods rather than the dozen of {@link #reduceInput}'s checks. A record, so
     * that C2 folds its fields when a compiled loop holds it as a constant (as it would a lambda's).
     */
    private record BuiltinAllreduce(MpiCommunicator comm, DType dtype, long count, long bytes, int n, long type,
                                    long op, SourceLocation where) implements BufferPairCall {
        @Override
        public void accept(MemorySegment in, MemorySegment out) {
            MpiCommunicator c = comm;
            MemorySegment send = in != null && out != null && in.byteSize() >= bytes && out.byteSize() >= bytes
                    && in.isNative() && out.isNative() && c.freedAt == null && c.world.mayCommunicate()
                    ? c.inPlaceOrCopy(in, bytes, out) : c.reduceInput("allreduce", in, out, dtype, count, bytes, where);
            int rc = c.mpi.allreduce(send, out, n, type, op, c.handle);
            if (rc != MpiLibrary.SUCCESS) {
                c.check(rc, "allreduce", -1, where);
            }
        }
    }

    @Override
    public void allgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        live("allgather", where);
        long bytes = CommChecks.buffer(this, "allgather", "input", in, dtype, countPerRank, where);
        CommChecks.buffer(this, "allgather", "output", out, dtype, total(countPerRank, where), where);
        int n = intCount("allgather", total(countPerRank, where), where);
        requireNative("allgather", in, where);
        requireNative("allgather", out, where);
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        check(mpi.allgather(send, n / size, mpi.datatype(dtype), out, handle), "allgather", -1, where);
    }

    @Override
    public void allgatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, SourceLocation where) {
        String op = "allgatherv";
        live(op, where);
        long total = CommChecks.counts(this, op, "counts", counts, where);
        long bytes = CommChecks.buffer(this, op, "input", in, dtype, counts[rank], where);
        CommChecks.buffer(this, op, "output", out, dtype, total, where);
        intCount(op, total, where);
        requireNative(op, in, where);
        requireNative(op, out, where);
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        try (Arena arena = Arena.ofConfined()) {
            check(mpi.allgatherv(send, (int) counts[rank], mpi.datatype(dtype), out, ints(arena, counts),
                    displacements(arena, counts), handle), op, -1, where);
        }
    }

    @Override
    public void gatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                        SourceLocation where) {
        String op = "gatherv";
        live(op, where);
        CommChecks.peer(this, op, "root", root, where);
        long total = CommChecks.counts(this, op, "counts", counts, where);
        long bytes = CommChecks.buffer(this, op, "input", in, dtype, counts[rank], where);
        intCount(op, total, where);
        requireNative(op, in, where);
        MemorySegment send = in;
        MemorySegment recv = MemorySegment.NULL;
        if (rank == root) {
            CommChecks.buffer(this, op, "output", out, dtype, total, where);
            requireNative(op, out, where);
            send = copyIfOverlapping(in, bytes, out);
            recv = out;
        }
        try (Arena arena = Arena.ofConfined()) {
            check(mpi.gatherv(send, (int) counts[rank], mpi.datatype(dtype), recv, ints(arena, counts),
                    displacements(arena, counts), root, handle), op, root, where);
        }
    }

    @Override
    public void scatterv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                         SourceLocation where) {
        String op = "scatterv";
        live(op, where);
        CommChecks.peer(this, op, "root", root, where);
        long total = CommChecks.counts(this, op, "counts", counts, where);
        CommChecks.buffer(this, op, "output", out, dtype, counts[rank], where);
        intCount(op, total, where);
        requireNative(op, out, where);
        MemorySegment send = MemorySegment.NULL;
        if (rank == root) {
            long bytes = CommChecks.buffer(this, op, "input", in, dtype, total, where);
            requireNative(op, in, where);
            send = copyIfOverlapping(in, bytes, out);
        }
        try (Arena arena = Arena.ofConfined()) {
            check(mpi.scatterv(send, ints(arena, counts), displacements(arena, counts), mpi.datatype(dtype), out,
                    (int) counts[rank], root, handle), op, root, where);
        }
    }

    @Override
    public void alltoallv(MemorySegment in, MemorySegment out, DType dtype, long[] sendCounts, long[] recvCounts,
                          SourceLocation where) {
        String op = "alltoallv";
        live(op, where);
        long sent = CommChecks.counts(this, op, "sendCounts", sendCounts, where);
        long received = CommChecks.counts(this, op, "recvCounts", recvCounts, where);
        long bytes = CommChecks.buffer(this, op, "input", in, dtype, sent, where);
        CommChecks.buffer(this, op, "output", out, dtype, received, where);
        intCount(op, sent, where);
        intCount(op, received, where);
        requireNative(op, in, where);
        requireNative(op, out, where);
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        try (Arena arena = Arena.ofConfined()) {
            check(mpi.alltoallv(send, ints(arena, sendCounts), displacements(arena, sendCounts), mpi.datatype(dtype),
                    out, ints(arena, recvCounts), displacements(arena, recvCounts), handle), op, -1, where);
        }
    }

    @Override
    public void reduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                              SourceLocation where) {
        live("reduce_scatter", where);
        CommChecks.reduceOp(this, "reduce_scatter", op, dtype, where);
        long inBytes = CommChecks.buffer(this, "reduce_scatter", "input", in, dtype, total(countPerRank, where), where);
        CommChecks.buffer(this, "reduce_scatter", "output", out, dtype, countPerRank, where);
        int n = intCount("reduce_scatter", total(countPerRank, where), where) / size;
        requireNative("reduce_scatter", in, where);
        requireNative("reduce_scatter", out, where);
        boolean inPlace = in.address() == out.address();
        MemorySegment send = inPlace ? mpi.inPlace : copyIfOverlapping(in, inBytes, out);
        MemorySegment recv = inPlace ? in : out;
        reduceCall("reduce_scatter", op, where,
                o -> mpi.reduceScatterBlock(send, recv, n, mpi.datatype(dtype), o, handle));
    }

    @Override
    public void bcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        live("bcast", where);
        CommChecks.peer(this, "bcast", "root", root, where);
        CommChecks.buffer(this, "bcast", "broadcast", buf, dtype, count, where);
        int n = intCount("bcast", count, where);
        requireNative("bcast", buf, where);
        check(mpi.bcast(buf, n, mpi.datatype(dtype), root, handle), "bcast", root, where);
    }

    @Override
    public void reduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, int root,
                       SourceLocation where) {
        live("reduce", where);
        CommChecks.peer(this, "reduce", "root", root, where);
        CommChecks.reduceOp(this, "reduce", op, dtype, where);
        long bytes = CommChecks.buffer(this, "reduce", "input", in, dtype, count, where);
        int n = intCount("reduce", count, where);
        requireNative("reduce", in, where);
        MemorySegment send = in;
        MemorySegment recv = MemorySegment.NULL;
        if (rank == root) {
            CommChecks.buffer(this, "reduce", "output", out, dtype, count, where);
            requireNative("reduce", out, where);
            send = inPlaceOrCopy(in, bytes, out);
            recv = out;
        }
        MemorySegment s = send;
        MemorySegment r = recv;
        reduceCall("reduce", op, where, o -> mpi.reduce(s, r, n, mpi.datatype(dtype), o, root, handle));
    }

    @Override
    public void alltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        live("alltoall", where);
        long total = total(countPerRank, where);
        long bytes = CommChecks.buffer(this, "alltoall", "input", in, dtype, total, where);
        CommChecks.buffer(this, "alltoall", "output", out, dtype, total, where);
        int n = intCount("alltoall", total, where) / size;
        requireNative("alltoall", in, where);
        requireNative("alltoall", out, where);
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        check(mpi.alltoall(send, n, mpi.datatype(dtype), out, handle), "alltoall", -1, where);
    }

    @Override
    public PendingRequest iallreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                              SourceLocation where) {
        String name = "iallreduce";
        long bytes = nonblockingArgs(name, op, in, dtype, count, where);
        CommChecks.buffer(this, name, "output", out, dtype, count, where);
        requireNative(name, out, where);
        int n = intCount(name, count, where);
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        return start(CommOp.Kind.IALLREDUCE, describe(op, dtype, count), where,
                cell -> mpi.iallreduce(send, out, n, mpi.datatype(dtype), op(op), handle, cell), send, out);
    }

    @Override
    public PendingRequest iallgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                              SourceLocation where) {
        String name = "iallgather";
        long bytes = nonblockingArgs(name, null, in, dtype, countPerRank, where);
        CommChecks.buffer(this, name, "output", out, dtype, total(countPerRank, where), where);
        requireNative(name, out, where);
        int n = intCount(name, total(countPerRank, where), where) / size;
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        return start(CommOp.Kind.IALLGATHER, describe(null, dtype, countPerRank), where,
                cell -> mpi.iallgather(send, n, mpi.datatype(dtype), out, handle, cell), send, out);
    }

    @Override
    public PendingRequest ireduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                                  SourceLocation where) {
        String name = "ireduce_scatter";
        long bytes = nonblockingArgs(name, op, in, dtype, total(countPerRank, where), where);
        CommChecks.buffer(this, name, "output", out, dtype, countPerRank, where);
        requireNative(name, out, where);
        int n = intCount(name, total(countPerRank, where), where) / size;
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        return start(CommOp.Kind.IREDUCE_SCATTER, describe(op, dtype, countPerRank), where,
                cell -> mpi.ireduceScatterBlock(send, out, n, mpi.datatype(dtype), op(op), handle, cell), send, out);
    }

    @Override
    public PendingRequest ibcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        String name = "ibcast";
        CommChecks.peer(this, name, "root", root, where);
        nonblockingArgs(name, null, buf, dtype, count, where);
        int n = intCount(name, count, where);
        return start(CommOp.Kind.IBCAST, "(root " + root + ", " + count + " x " + dtype.specName() + ")", where,
                cell -> mpi.ibcast(buf, n, mpi.datatype(dtype), root, handle, cell), buf);
    }

    @Override
    public PendingRequest ialltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                             SourceLocation where) {
        String name = "ialltoall";
        long total = total(countPerRank, where);
        long bytes = nonblockingArgs(name, null, in, dtype, total, where);
        CommChecks.buffer(this, name, "output", out, dtype, total, where);
        requireNative(name, out, where);
        int n = intCount(name, total, where) / size;
        MemorySegment send = copyIfOverlapping(in, bytes, out);
        return start(CommOp.Kind.IALLTOALL, describe(null, dtype, countPerRank), where,
                cell -> mpi.ialltoall(send, n, mpi.datatype(dtype), out, handle, cell), send, out);
    }

    @Override
    public PendingRequest ibarrier(SourceLocation where) {
        live("ibarrier", where);
        return start(CommOp.Kind.IBARRIER, "", where, cell -> mpi.ibarrier(handle, cell));
    }

    /**
     * MPI_Test calls per in-flight collective at each {@link #progress}: Open MPI's nonblocking collectives (libnbc)
     * advance on a low-priority progress callback, run at one progress call in eight, so one test per step mostly
     * advanced only the point-to-point layer.
     */
    private static final int TESTS = 8;

    /**
     * Tests every nonblocking collective of this communicator still in flight, up to {@link #TESTS} times each
     * until it completes: MPI advances them meanwhile.
     */
    @Override
    public void progress() {
        if (inFlight.isEmpty() || !world.mayCommunicate()) {
            return;
        }
        for (MpiCollectiveRequest r : inFlight) {
            for (int i = 0; i < TESTS; i++) {
                int rc = mpi.test(r.cell, testFlag, testStatus);
                if (rc != MpiLibrary.SUCCESS || testFlag.get(ValueLayout.JAVA_INT, 0) != 0) {
                    // done, or failed: the wait reports it, at the user's line
                    break;
                }
            }
        }
    }

    /**
     * Checks a nonblocking collective's input (and its reduce operator: a built-in one, since MPI may call a custom
     * one in whatever call progresses the request); returns its bytes.
     */
    private long nonblockingArgs(String op, RuntimeReduceOp reduceOp, MemorySegment in, DType dtype, long count,
                                 SourceLocation where) {
        live(op, where);
        if (reduceOp != null) {
            CommChecks.reduceOp(this, op, reduceOp, dtype, where);
            if (!(reduceOp instanceof RuntimeReduceOp.Builtin)) {
                throw new CommException(where, String.format("%s on '%s': a custom reduce op (%s) runs only in the"
                        + " blocking collective", op, name, reduceOp.name()));
            }
        }
        long bytes = CommChecks.buffer(this, op, "input", in, dtype, count, where);
        requireNative(op, in, where);
        return bytes;
    }

    private long op(RuntimeReduceOp op) {
        return builtin((RuntimeReduceOp.Builtin) op);
    }

    private static String describe(RuntimeReduceOp op, DType dtype, long count) {
        return "(" + (op == null ? "" : op.name() + ", ") + count + " x " + dtype.specName() + ")";
    }

    /** Posts a nonblocking collective with {@code post} (given the request cell), holding {@code buffers}. */
    private PendingRequest start(CommOp.Kind kind, String what, SourceLocation where, ToIntFunction<MemorySegment> post,
                          MemorySegment... buffers) {
        return world.requests().start(kind.label(), name, where, () -> {
            MemorySegment cell = Arena.ofAuto().allocate(mpi.handleBytes());
            check(post.applyAsInt(cell), kind.label(), -1, where);
            MpiCollectiveRequest r = new MpiCollectiveRequest(this, kind, cell, what, where, buffers);
            inFlight.add(r);
            return r;
        });
    }

    @Override
    public Communicator split(int color, int key, SourceLocation where) {
        live("split", where);
        CommChecks.color(this, color, where);
        String childName = name + ".split(" + color + ")#" + derived++;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cell = arena.allocate(mpi.handleBytes());
            check(mpi.commSplit(handle, color, key, cell), "split", -1, where);
            return new MpiCommunicator(world, mpi.readHandle(cell), childName, false);
        }
    }

    @Override
    public Communicator dup(SourceLocation where) {
        live("dup", where);
        return dup(name + ".dup#" + derived++, where);
    }

    /** Fails as {@code op} itself would when this thread may not communicate now; then exchanges on {@code dup}. */
    @Override
    public void checkExchange(Communicator dup, MemorySegment in, MemorySegment out, long longs, CommOp.Kind op,
                              DType dtype, long count, String reduce, int root, SourceLocation where) {
        live(op.label(), where);
        dup.allreduce(in, out, DType.I64, longs, RuntimeReduceOp.MAX, where);
    }

    @Override
    public Communicator privateDup(SourceLocation where) {
        live("dup", where);
        return dup(name + PRIVATE_SUFFIX, where);
    }

    private Communicator dup(String childName, SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cell = arena.allocate(mpi.handleBytes());
            check(mpi.commDup(handle, cell), "dup", -1, where);
            return new MpiCommunicator(world, mpi.readHandle(cell), childName, false);
        }
    }

    @Override
    public void free(SourceLocation where) {
        live("free", where);
        if (isWorld) {
            throw new CommException(where, "free: the world communicator cannot be freed");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cell = arena.allocate(mpi.handleBytes());
            mpi.writeHandle(cell, handle);
            check(mpi.commFree(cell), "free", -1, where);
        }
        freedAt = where;
    }

    @Override
    public String toString() {
        return "rank " + rank + " of MPI communicator '" + name + "'";
    }

    private void live(String op, SourceLocation where) {
        world.checkThread(op, name, where);
        if (freedAt != null) {
            throw new CommException(where, String.format("%s on '%s': the communicator was freed at %s",
                    op, name, freedAt));
        }
    }

    /** Checks a point-to-point call's arguments; returns the count as MPI's int. */
    private int p2pArgs(String op, String role, MemorySegment buf, DType dtype, long count, int peer, int tag,
                        SourceLocation where) {
        live(op, where);
        CommChecks.peer(this, op, role, peer, where);
        CommChecks.tag(this, op, tag, where);
        CommChecks.buffer(this, op, role.equals("source") ? "receive" : "send", buf, dtype, count, where);
        requireNative(op, buf, where);
        return intCount(op, count, where);
    }

    private void requireNative(String op, MemorySegment buf, SourceLocation where) {
        if (!buf.isNative()) {
            throw new CommException(where, String.format("%s on '%s': MPI needs native buffers, got a heap segment",
                    op, name));
        }
    }

    private int intCount(String op, long count, SourceLocation where) {
        if (count > Integer.MAX_VALUE) {
            throw new CommException(where, String.format("%s on '%s': %d elements exceed MPI's int count",
                    op, name, count));
        }
        return (int) count;
    }

    /** {@code counts} as a C int array (their sum fits an int: checked by {@link #intCount} before). */
    private static MemorySegment ints(Arena arena, long[] counts) {
        MemorySegment a = arena.allocate(ValueLayout.JAVA_INT, counts.length);
        for (int i = 0; i < counts.length; i++) {
            a.setAtIndex(ValueLayout.JAVA_INT, i, (int) counts[i]);
        }
        return a;
    }

    /** The offsets of the blocks of {@code counts}, laid end to end, as a C int array. */
    private static MemorySegment displacements(Arena arena, long[] counts) {
        MemorySegment a = arena.allocate(ValueLayout.JAVA_INT, counts.length);
        long at = 0;
        for (int i = 0; i < counts.length; i++) {
            a.setAtIndex(ValueLayout.JAVA_INT, i, (int) at);
            at += counts[i];
        }
        return a;
    }

    private long total(long countPerRank, SourceLocation where) {
        try {
            return Math.multiplyExact(countPerRank, size);
        } catch (ArithmeticException e) {
            throw new CommException(where, String.format("count %d per rank is too large", countPerRank));
        }
    }

    /**
     * Checks a reducing collective's buffers and the communicator's state; returns what to pass MPI as the input
     * (see {@link #inPlaceOrCopy}).
     */
    private MemorySegment reduceInput(String op, MemorySegment in, MemorySegment out, DType dtype, long count,
                                      long bytes, SourceLocation where) {
        live(op, where);
        CommChecks.holds(this, op, "input", in, dtype, count, bytes, where);
        CommChecks.holds(this, op, "output", out, dtype, count, bytes, where);
        requireNative(op, in, where);
        requireNative(op, out, where);
        return inPlaceOrCopy(in, bytes, out);
    }

    /** {@code MPI_IN_PLACE} when {@code in} starts where {@code out} does (MPI forbids aliased buffers). */
    private MemorySegment inPlaceOrCopy(MemorySegment in, long bytes, MemorySegment out) {
        return in.address() == out.address() ? mpi.inPlace : copyIfOverlapping(in, bytes, out);
    }

    /** {@code in}'s first {@code bytes}, or a copy of them when they overlap {@code out} (both native). */
    private static MemorySegment copyIfOverlapping(MemorySegment in, long bytes, MemorySegment out) {
        long a = in.address(), b = out.address();
        if (a + bytes <= b || b + out.byteSize() <= a) {
            return in;
        }
        MemorySegment copy = Arena.ofAuto().allocate(Math.max(1, bytes));
        MemorySegment.copy(in, 0, copy, 0, bytes);
        return copy;
    }

    /** Runs a reducing collective with {@code op}'s MPI handle. */
    private void reduceCall(String op, RuntimeReduceOp reduceOp, SourceLocation where, LongToIntFunction call) {
        int rc = switch (reduceOp) {
            case RuntimeReduceOp.Builtin b -> call.applyAsInt(builtin(b));
            case RuntimeReduceOp.Custom c -> {
                try {
                    yield world.userOp().run(c.function(), call);
                } catch (RuntimeException e) {
                    throw new CommException(where, String.format("%s on '%s': custom reduce op %s failed: %s",
                            op, name, c.name(), e instanceof WeftException ? e.getMessage() : e), e);
                }
            }
        };
        check(rc, op, -1, where);
    }

    private long builtin(RuntimeReduceOp.Builtin b) {
        return switch (b) {
            case SUM -> mpi.sum;
            case PROD -> mpi.prod;
            case MIN -> mpi.min;
            case MAX -> mpi.max;
        };
    }

    /**
     * Checks that a completed receive got exactly {@code count} elements; {@code op} names the call in the message
     * of a failed {@code MPI_Get_count}, and is only formatted then.
     */
    private void received(MemorySegment status, DType dtype, long count, int src, int tag, Supplier<String> op,
                          SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment got = arena.allocate(ValueLayout.JAVA_INT);
            int rc = mpi.getCount(status, mpi.datatype(dtype), got);
            if (rc != MpiLibrary.SUCCESS) {
                check(rc, op.get(), src, where);
            }
            int n = got.get(ValueLayout.JAVA_INT, 0);
            if (n != count) {
                throw new MessageMismatchException(where, String.format("message size mismatch on '%s': rank %d "
                        + "receives %d x %s from rank %d tag %d, but %s were sent", name, rank, count, dtype.specName(),
                        src, tag, n == MpiLibrary.UNDEFINED ? "a different number of bytes" : n + " elements"));
            }
        }
    }

    /** Raises a {@link CommException} for a non-zero MPI return code ({@link MessageMismatchException}: truncated). */
    private void check(int rc, String op, int peer, SourceLocation where) {
        if (rc != MpiLibrary.SUCCESS) {
            String message = String.format("%s on '%s' (rank %d of %d%s) failed: %s", op, name, rank, size,
                    peer >= 0 ? ", peer rank " + peer : "", mpi.errorString(rc));
            throw mpi.truncated(rc) ? new MessageMismatchException(where, message) : new CommException(where, message);
        }
    }
}
