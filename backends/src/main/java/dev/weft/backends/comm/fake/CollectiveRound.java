package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.spi.SourceLocation;

import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One collective of a communicator, matched across ranks by call order: each rank arrives with its call and
 * payload; the first call is the reference the others must agree with; the last arrival computes every rank's
 * result. A disagreement or a failing computation becomes the round's error, raised on every participant.
 * Guarded by the world's lock, which {@link #compute} releases while it runs.
 */
final class CollectiveRound {
    private final CommGroup group;
    private final long seq;
    private final Object[] payloads;
    private final boolean[] arrived;
    private int arrivals;
    private int lastRank;
    private int departures;
    private CollectiveCall reference;
    private int referenceRank;
    private RuntimeReduceOp op;
    private Object[] results;
    private String error;
    private Throwable errorCause;

    CollectiveRound(CommGroup group, long seq) {
        this.group = group;
        this.seq = seq;
        this.payloads = new Object[group.size()];
        this.arrived = new boolean[group.size()];
    }

    /**
     * Records {@code rank}'s arrival; returns whether it was the last one of a round without error, whose thread
     * must then {@link #compute} the results.
     */
    boolean arrive(int rank, CollectiveCall call, RuntimeReduceOp reduceOp, Object payload) {
        if (reference == null) {
            reference = call;
            referenceRank = rank;
            op = reduceOp;
        } else if (error == null && !call.agreesWith(reference)) {
            error = String.format("collective mismatch on '%s' (collective #%d): rank %d called %s at %s, "
                            + "but rank %d called %s at %s",
                    group.name, seq, rank, call, call.where(), referenceRank, reference, reference.where());
        }
        payloads[rank] = payload;
        arrived[rank] = true;
        arrivals++;
        lastRank = rank;
        return arrivals == group.size() && error == null;
    }

    /**
     * Computes every rank's result with {@code lock} (the world's, held by the caller) released: a custom reduce op
     * is user code, which may block, fail, or call {@code System.exit}, whose exit guard then reads the world's
     * state. The other ranks wait meanwhile, since the round is not done; an {@link Error} is also raised here.
     */
    void compute(ReentrantLock lock) {
        Object[] computed = null;
        Throwable failure = null;
        lock.unlock();
        try {
            computed = Collectives.compute(group, reference, op, payloads);
        } catch (Throwable t) {
            failure = t;
        } finally {
            lock.lock();
        }
        if (failure != null) {
            error = String.format("%s on '%s' failed: %s", reference, group.name, WorldMonitor.summary(failure));
            errorCause = failure;
            if (failure instanceof Error e) {
                throw e;
            }
        }
        results = computed;
    }

    boolean done() {
        return results != null || error != null;
    }

    /** This rank's result (null where the collective gives it none); raises the round's error if it has one. */
    Object depart(int rank, SourceLocation where) {
        if (++departures == group.size()) {
            group.retire(seq);
        }
        if (error != null) {
            throw new CommException(where, error, errorCause);
        }
        return results[rank];
    }

    /** What {@code rank} waits for while blocked in this round with {@code call}. */
    Wait waitFor(CollectiveCall call) {
        return new Wait() {
            @Override
            public boolean ready() {
                return done();
            }

            @Override
            public int[] awaitedWorldRanks() {
                return missing().map(r -> group.worldRanks[r]).toArray();
            }

            @Override
            public String describe() {
                if (missing().findAny().isEmpty()) {
                    return String.format("%s on '%s' (collective #%d) waiting for rank %d to compute the result",
                            call, group.name, seq, lastRank);
                }
                return String.format("%s on '%s' (collective #%d) waiting for rank%s %s", call, group.name, seq,
                        missing().count() == 1 ? "" : "s",
                        missing().mapToObj(Integer::toString).collect(Collectors.joining(", ")));
            }

            @Override
            public SourceLocation where() {
                return call.where();
            }
        };
    }

    private IntStream missing() {
        return IntStream.range(0, arrived.length).filter(r -> !arrived[r]);
    }
}
