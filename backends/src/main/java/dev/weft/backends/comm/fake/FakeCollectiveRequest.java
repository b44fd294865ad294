package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.PendingRequest;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/**
 * A fake nonblocking collective: the round this rank arrived at when it started, and what to do with its result
 * once every rank has arrived and the round is computed. Mutable state is guarded by the world's lock.
 */
final class FakeCollectiveRequest implements PendingRequest {
    /** What the wait does with this rank's result (a segment, or null where the rank receives nothing). */
    @FunctionalInterface
    interface Delivery {
        void deliver(Object result);
    }

    final FakeCommunicator owner;
    final CollectiveRound round;
    final CollectiveCall call;
    final long seq;
    final Delivery delivery;
    private SourceLocation waitedAt;

    FakeCollectiveRequest(FakeCommunicator owner, CollectiveRound round, CollectiveCall call, long seq,
                          Delivery delivery) {
        this.owner = owner;
        this.round = round;
        this.call = call;
        this.seq = seq;
        this.delivery = delivery;
    }

    /** Marks the request waited at {@code at}; returns where it was waited before, or null the first time. */
    SourceLocation markWaited(SourceLocation at) {
        SourceLocation before = waitedAt;
        if (before == null) {
            waitedAt = at;
        }
        return before;
    }

    /** Copies {@code bytes} of a result segment into {@code out}. */
    static Delivery into(MemorySegment out, long bytes) {
        return result -> MemorySegment.copy((MemorySegment) result, 0, out, 0, bytes);
    }

    @Override
    public String describe() {
        return String.format("%s on '%s' (collective #%d) at %s", call, owner.name(), seq, call.where());
    }

    @Override
    public String toString() {
        return describe();
    }
}
