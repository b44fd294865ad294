package dev.weft.backends.comm.mpi;

import dev.weft.backends.comm.PendingRequest;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;

/**
 * A request MPI runs for this communicator: the {@code MPI_Request} cell MPI writes, and strong references to the
 * buffers MPI reads or writes, held until {@link MpiCommunicator#wait} completes it, so that they cannot be
 * reclaimed while MPI uses them.
 */
abstract sealed class MpiPendingRequest implements PendingRequest permits MpiRequest, MpiCollectiveRequest {
    final MpiCommunicator owner;
    final MemorySegment cell;
    final SourceLocation where;
    private MemorySegment[] buffers;
    private SourceLocation waitedAt;

    MpiPendingRequest(MpiCommunicator owner, MemorySegment cell, SourceLocation where, MemorySegment... buffers) {
        this.owner = owner;
        this.cell = cell;
        this.where = where;
        this.buffers = buffers;
    }

    /** Marks the request waited at {@code at}; returns where it was waited before, or null the first time. */
    SourceLocation markWaited(SourceLocation at) {
        SourceLocation before = waitedAt;
        if (before == null) {
            waitedAt = at;
        }
        return before;
    }

    /** Drops the buffer references once MPI is done with them. */
    void release() {
        buffers = null;
    }

    /** The peer rank an error names, or -1 for a collective. */
    abstract int peer();

    @Override
    public String toString() {
        return describe() + (buffers == null ? " (completed)" : "");
    }
}
