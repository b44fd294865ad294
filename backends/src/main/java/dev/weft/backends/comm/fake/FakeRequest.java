package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.comm.Comm;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/**
 * A fake send (complete once a receive matched its message, or from the start when it was buffered: see
 * {@link FakeSettings#eagerLimit()}) or receive (complete once matched with a message); blocking sends and
 * receives use one too. Mutable state is guarded by the world's lock.
 */
final class FakeRequest implements PendingRequest {
    enum Kind { SEND, RECV }

    final FakeCommunicator owner;
    final Kind kind;
    final MemorySegment buf;
    final DType dtype;
    final long count;
    final int peer;
    final int tag;
    final SourceLocation where;
    private final boolean buffered;
    private Message matched;
    private SourceLocation waitedAt;

    FakeRequest(FakeCommunicator owner, Kind kind, MemorySegment buf, DType dtype, long count, int peer, int tag,
                SourceLocation where, boolean buffered) {
        this.owner = owner;
        this.kind = kind;
        this.buf = buf;
        this.dtype = dtype;
        this.count = count;
        this.peer = peer;
        this.tag = tag;
        this.where = where;
        this.buffered = buffered;
    }

    /** Whether this receive takes {@code m}: its source and tag, or any for a wildcard. */
    boolean matches(Message m) {
        return (m.source() == peer || peer == Comm.ANY_SOURCE) && (m.tag() == tag || tag == Comm.ANY_TAG);
    }

    /** A receive's source and tag as messages name them: {@code rank 1 tag 7}, {@code any rank tag any}. */
    String peerAndTag() {
        return (peer == Comm.ANY_SOURCE ? "any rank" : "rank " + peer) + " tag "
                + (tag == Comm.ANY_TAG ? "any" : String.valueOf(tag));
    }

    void match(Message m) {
        matched = m;
    }

    Message matched() {
        return matched;
    }

    boolean complete() {
        return buffered || matched != null;
    }

    /** Marks the request waited at {@code at}; returns where it was waited before, or null the first time. */
    SourceLocation markWaited(SourceLocation at) {
        SourceLocation before = waitedAt;
        if (before == null) {
            waitedAt = at;
        }
        return before;
    }

    @Override
    public String describe() {
        return String.format("%s(%d x %s) on '%s' %s rank %d tag %d at %s",
                kind == Kind.SEND ? "isend" : "irecv", count, dtype.specName(), owner.name(),
                kind == Kind.SEND ? "to" : "from", peer, tag, where);
    }

    @Override
    public String toString() {
        return describe();
    }
}
