package dev.weft.backends.comm.mpi;

import dev.weft.DType;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/**
 * An MPI {@code isend} or {@code irecv}: the {@code MPI_Request} cell MPI writes, and a strong reference to the
 * buffer MPI reads or writes, held until {@link MpiCommunicator#wait} completes the request, so the buffer cannot
 * be reclaimed while MPI uses it.
 */
final class MpiRequest implements PendingRequest {
    final MpiCommunicator owner;
    final boolean receive;
    final MemorySegment cell;
    final DType dtype;
    final long count;
    final int peer;
    final int tag;
    final SourceLocation where;
    private MemorySegment buf;
    private SourceLocation waitedAt;

    MpiRequest(MpiCommunicator owner, boolean receive, MemorySegment cell, MemorySegment buf, DType dtype, long count,
               int peer, int tag, SourceLocation where) {
        this.owner = owner;
        this.receive = receive;
        this.cell = cell;
        this.buf = buf;
        this.dtype = dtype;
        this.count = count;
        this.peer = peer;
        this.tag = tag;
        this.where = where;
    }

    /** Marks the request waited at {@code at}; returns where it was waited before, or null the first time. */
    SourceLocation markWaited(SourceLocation at) {
        SourceLocation before = waitedAt;
        if (before == null) {
            waitedAt = at;
        }
        return before;
    }

    /** Drops the buffer reference once MPI is done with it. */
    void release() {
        buf = null;
    }

    @Override
    public String describe() {
        return String.format("%s(%d x %s) on '%s' %s rank %d tag %d at %s", receive ? "irecv" : "isend", count,
                dtype.specName(), owner.name(), receive ? "from" : "to", peer, tag, where);
    }

    @Override
    public String toString() {
        return describe() + (buf == null ? " (completed)" : "");
    }
}
