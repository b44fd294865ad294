package dev.weft.backends.comm.flight;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * A communicator that records each operation in its rank's {@link FlightRecorder} around the runtime's own
 * communicator, which does the work: created where a runtime makes its world, and wrapping the communicators
 * {@code split} and {@code dup} derive, so that eager calls and compiled programs (which bind their calls through
 * {@link #bindAllreduce} and the other methods here) are recorded alike on the fake and the MPI runtime. A
 * decorator rather than calls inside each runtime: one place records both, and a bound allreduce costs the
 * recorder's few stores and one more call, which the JIT inlines.
 *
 * <p>Blocking operations are recorded as started and then completed or failed; {@code isend}, {@code irecv} and the
 * nonblocking collectives as posted, completed when their request is waited (the {@code wait} is recorded too). Collectives are numbered per
 * communicator. Requests are wrapped ({@link FlightRequest}) and unwrapped for the runtime.
 */
public final class FlightCommunicator implements Communicator {
    private final Communicator inner;
    private final FlightRecorder recorder;
    /**
     * The schedule check's private duplicate of this communicator, made with it, while every member takes part in
     * its creation anyway: made later, at a first check, it would be a collective of its own that ranks which never
     * communicate there would not join. Null for a private duplicate itself.
     */
    private Communicator checkDup;
    private long collectives;

    private FlightCommunicator(Communicator inner, FlightRecorder recorder) {
        this.inner = inner;
        this.recorder = recorder;
    }

    /**
     * {@code inner}, a world, its operations recorded in {@code recorder}; {@code privateDup} is its private
     * duplicate ({@link Communicator#privateDup}), made by the runtime with the world.
     */
    public static Communicator of(Communicator inner, Communicator privateDup, FlightRecorder recorder) {
        FlightCommunicator world = new FlightCommunicator(inner, recorder);
        world.checkDup = new FlightCommunicator(privateDup, recorder);
        return world;
    }

    @Override
    public int rank() {
        return inner.rank();
    }

    @Override
    public int size() {
        return inner.size();
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public void barrier(SourceLocation where) {
        long s = collective(CommOp.Kind.BARRIER, -1, null, -1, null, where);
        try {
            inner.barrier(where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void send(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        long s = recorder.begin(call(CommOp.Kind.SEND, dest, tag, dtype, count, null, where), -1, -1,
                FlightState.STARTED);
        try {
            inner.send(buf, dtype, count, dest, tag, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void recv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        long s = recorder.begin(call(CommOp.Kind.RECV, src, tag, dtype, count, null, where), -1, -1,
                FlightState.STARTED);
        try {
            inner.recv(buf, dtype, count, src, tag, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void recvAny(MemorySegment buf, DType dtype, long count, int src, int tag, MemorySegment status,
                        SourceLocation where) {
        long s = recorder.begin(call(CommOp.Kind.RECV_ANY, src, tag, dtype, count, null, where), -1, -1,
                FlightState.STARTED);
        try {
            inner.recvAny(buf, dtype, count, src, tag, status, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public PendingRequest isend(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where) {
        FlightCall c = call(CommOp.Kind.ISEND, dest, tag, dtype, count, null, where);
        long s = recorder.begin(c, -1, -1, FlightState.POSTED);
        try {
            return new FlightRequest(inner.isend(buf, dtype, count, dest, tag, where), c, s);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
    }

    @Override
    public PendingRequest irecv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where) {
        FlightCall c = call(CommOp.Kind.IRECV, src, tag, dtype, count, null, where);
        long s = recorder.begin(c, -1, -1, FlightState.POSTED);
        try {
            return new FlightRequest(inner.irecv(buf, dtype, count, src, tag, where), c, s);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
    }

    @Override
    public void wait(PendingRequest request, SourceLocation where) {
        if (!(request instanceof FlightRequest r)) {
            inner.wait(request, where);
            return;
        }
        FlightCall p = r.call();
        FlightCall c = new FlightCall(p.op() == CommOp.Kind.ISEND ? CommOp.Kind.WAIT_ISEND
                : p.op() == CommOp.Kind.IRECV ? CommOp.Kind.WAIT_IRECV : CommOp.Kind.WAIT_COLLECTIVE,
                inner.name(), inner.rank(), inner.size(), p.peer(), p.tag(), -1, -1, p.dtype(), p.count(), null,
                where);
        long s = recorder.begin(c, -1, r.seq(), FlightState.STARTED);
        try {
            inner.wait(r.inner(), where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
        recorder.completed(r.seq());
    }

    @Override
    public void sendrecv(MemorySegment sendbuf, DType dtype, long count, int dest, int sendtag,
                         MemorySegment recvbuf, long recvcount, int src, int recvtag, SourceLocation where) {
        FlightCall c = new FlightCall(CommOp.Kind.SENDRECV, inner.name(), inner.rank(), inner.size(), dest, sendtag, src,
                recvtag, dtype == null ? null : dtype.specName(), count, null, where);
        long s = recorder.begin(c, -1, -1, FlightState.STARTED);
        try {
            inner.sendrecv(sendbuf, dtype, count, dest, sendtag, recvbuf, recvcount, src, recvtag, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void allreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                          SourceLocation where) {
        long s = collective(CommOp.Kind.ALLREDUCE, -1, dtype, count, op, where);
        try {
            inner.allreduce(in, out, dtype, count, op, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    /**
     * Recorded as {@code op} on this communicator, under the number its collective will have, while it runs on the
     * duplicate's own runtime, and forgotten once it returns, when {@code op} itself is recorded: a rank blocked in
     * the check shows the operation it waits to run, and a passed check leaves no entry.
     */
    @Override
    public void checkExchange(Communicator dup, MemorySegment in, MemorySegment out, long longs, CommOp.Kind op,
                              DType dtype, long count, String reduce, int root, SourceLocation where) {
        Communicator runtimeDup = dup instanceof FlightCommunicator f ? f.inner : dup;
        long s = recorder.begin(new FlightCall(op, inner.name(), inner.rank(), inner.size(), root, -1, -1, -1,
                dtype == null ? null : dtype.specName(), count, reduce, where), collectives + 1, -1,
                FlightState.STARTED);
        try {
            inner.checkExchange(runtimeDup, in, out, longs, op, dtype, count, reduce, root, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.retract(s);
    }

    /**
     * The runtime's bound call, its {@link FlightCall} built and registered here, once (recorded as an unbound call
     * when the recorder registers no more).
     */
    @Override
    public BufferPairCall bindAllreduce(DType dtype, long count, RuntimeReduceOp op, SourceLocation where) {
        BufferPairCall bound = inner.bindAllreduce(dtype, count, op, where);
        int registered = recorder.register(call(CommOp.Kind.ALLREDUCE, -1, -1, dtype, count, op, where));
        return registered >= 0 ? new RecordedCollective(this, recorder, bound, registered)
                : (in, out) -> allreduce(in, out, dtype, count, op, where);
    }

    /**
     * A bound collective of {@code comm}, recorded by its registered number: a record rather than a lambda, so
     * that each call runs one method of its own (a lambda adds a second, which counts before the JIT compiles it),
     * whose fields C2 folds like a lambda's when a compiled loop holds it as a constant.
     */
    private record RecordedCollective(FlightCommunicator comm, FlightRecorder recorder, BufferPairCall bound,
                                      int registered) implements BufferPairCall {
        @Override
        public void accept(MemorySegment in, MemorySegment out) {
            long s = recorder.begin(registered, ++comm.collectives);
            try {
                bound.accept(in, out);
            } catch (RuntimeException | Error e) {
                recorder.end(s, FlightState.FAILED);
                throw e;
            }
            recorder.completed(s);
        }
    }

    @Override
    public void allgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        long s = collective(CommOp.Kind.ALLGATHER, -1, dtype, countPerRank, null, where);
        try {
            inner.allgather(in, out, dtype, countPerRank, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void allgatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, SourceLocation where) {
        long s = collective(CommOp.Kind.ALLGATHERV, -1, dtype, mine(counts), null, where);
        try {
            inner.allgatherv(in, out, dtype, counts, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void gatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                        SourceLocation where) {
        long s = collective(CommOp.Kind.GATHERV, root, dtype, mine(counts), null, where);
        try {
            inner.gatherv(in, out, dtype, counts, root, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void scatterv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root,
                         SourceLocation where) {
        long s = collective(CommOp.Kind.SCATTERV, root, dtype, mine(counts), null, where);
        try {
            inner.scatterv(in, out, dtype, counts, root, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    /** Recorded with the elements this rank sends. */
    @Override
    public void alltoallv(MemorySegment in, MemorySegment out, DType dtype, long[] sendCounts, long[] recvCounts,
                          SourceLocation where) {
        long s = collective(CommOp.Kind.ALLTOALLV, -1, dtype, sendCounts == null ? -1
                : Arrays.stream(sendCounts).sum(), null, where);
        try {
            inner.alltoallv(in, out, dtype, sendCounts, recvCounts, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void reduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                              SourceLocation where) {
        long s = collective(CommOp.Kind.REDUCE_SCATTER, -1, dtype, countPerRank, op, where);
        try {
            inner.reduceScatter(in, out, dtype, countPerRank, op, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void bcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        long s = collective(CommOp.Kind.BCAST, root, dtype, count, null, where);
        try {
            inner.bcast(buf, dtype, count, root, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void reduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, int root,
                       SourceLocation where) {
        long s = collective(CommOp.Kind.REDUCE, root, dtype, count, op, where);
        try {
            inner.reduce(in, out, dtype, count, op, root, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public void alltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where) {
        long s = collective(CommOp.Kind.ALLTOALL, -1, dtype, countPerRank, null, where);
        try {
            inner.alltoall(in, out, dtype, countPerRank, where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public Communicator split(int color, int key, SourceLocation where) {
        return derive(CommOp.Kind.SPLIT, () -> inner.split(color, key, where), where);
    }

    @Override
    public Communicator dup(SourceLocation where) {
        return derive(CommOp.Kind.DUP, () -> inner.dup(where), where);
    }

    /** The one made with this communicator; a private duplicate's own is made now, collectively. */
    @Override
    public Communicator privateDup(SourceLocation where) {
        return checkDup != null ? checkDup : derive(CommOp.Kind.PRIVATE_DUP, () -> inner.privateDup(where), where);
    }

    @Override
    public void free(SourceLocation where) {
        long s = recorder.begin(call(CommOp.Kind.FREE, -1, -1, null, -1, null, where), -1, -1, FlightState.STARTED);
        try {
            inner.free(where);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
    }

    @Override
    public String toString() {
        return inner.toString();
    }

    private Communicator derive(CommOp.Kind op, Supplier<Communicator> derive, SourceLocation where) {
        if (op != CommOp.Kind.PRIVATE_DUP) {
            CommCheck.creation(this, op, where);
        }
        long s = collective(op, -1, null, -1, null, where);
        Communicator child;
        try {
            child = derive.get();
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
        recorder.completed(s);
        FlightCommunicator derived = new FlightCommunicator(child, recorder);
        if (op != CommOp.Kind.PRIVATE_DUP) {
            // Not recorded: Weft's own, it would shift the numbers of the user's collectives on the child.
            derived.checkDup = new FlightCommunicator(child.privateDup(where), recorder);
        }
        return derived;
    }

    /** Records the start of this communicator's next collective; returns its sequence number. */
    @Override
    public PendingRequest iallreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                              SourceLocation where) {
        return started(CommOp.Kind.IALLREDUCE, -1, dtype, count, op, where,
                () -> inner.iallreduce(in, out, dtype, count, op, where));
    }

    @Override
    public PendingRequest iallgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                              SourceLocation where) {
        return started(CommOp.Kind.IALLGATHER, -1, dtype, countPerRank, null, where,
                () -> inner.iallgather(in, out, dtype, countPerRank, where));
    }

    @Override
    public PendingRequest ireduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                                  SourceLocation where) {
        return started(CommOp.Kind.IREDUCE_SCATTER, -1, dtype, countPerRank, op, where,
                () -> inner.ireduceScatter(in, out, dtype, countPerRank, op, where));
    }

    @Override
    public PendingRequest ibcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where) {
        return started(CommOp.Kind.IBCAST, root, dtype, count, null, where,
                () -> inner.ibcast(buf, dtype, count, root, where));
    }

    @Override
    public PendingRequest ialltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank,
                             SourceLocation where) {
        return started(CommOp.Kind.IALLTOALL, -1, dtype, countPerRank, null, where,
                () -> inner.ialltoall(in, out, dtype, countPerRank, where));
    }

    @Override
    public PendingRequest ibarrier(SourceLocation where) {
        return started(CommOp.Kind.IBARRIER, -1, null, -1, null, where, () -> inner.ibarrier(where));
    }

    @Override
    public void progress() {
        inner.progress();
    }

    /**
     * A nonblocking collective, recorded as posted under its collective's number and completed with the wait of its
     * request (recorded as {@code wait_collective}).
     */
    private PendingRequest started(CommOp.Kind op, int root, DType dtype, long count, RuntimeReduceOp reduce, SourceLocation where,
                            Supplier<PendingRequest> start) {
        FlightCall c = call(op, root, -1, dtype, count, reduce, where);
        long s = recorder.begin(c, ++collectives, -1, FlightState.POSTED);
        try {
            return new FlightRequest(start.get(), c, s);
        } catch (RuntimeException | Error e) {
            recorder.end(s, FlightState.FAILED);
            throw e;
        }
    }

    private long collective(CommOp.Kind op, int root, DType dtype, long count, RuntimeReduceOp reduce, SourceLocation where) {
        return recorder.begin(call(op, root, -1, dtype, count, reduce, where), ++collectives, -1,
                FlightState.STARTED);
    }

    /** This rank's entry of a variable-count collective's counts, recorded as its count; -1 for bad counts. */
    private long mine(long[] counts) {
        return counts != null && counts.length == inner.size() ? counts[inner.rank()] : -1;
    }

    private FlightCall call(CommOp.Kind op, int peer, int tag, DType dtype, long count, RuntimeReduceOp reduce,
                            SourceLocation where) {
        return new FlightCall(op, inner.name(), inner.rank(), inner.size(), peer, tag, -1, -1,
                dtype == null ? null : dtype.specName(), count, reduce == null ? null : reduce.name(), where);
    }
}
