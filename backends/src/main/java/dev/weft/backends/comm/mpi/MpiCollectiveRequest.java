package dev.weft.backends.comm.mpi;

import dev.weft.backends.comm.PendingRequest;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/**
 * An MPI nonblocking collective ({@code MPI_Iallreduce}, ...): the {@code MPI_Request} cell MPI writes, and strong
 * references to the buffers MPI reads and writes, held until {@link MpiCommunicator#wait} completes it.
 */
final class MpiCollectiveRequest implements PendingRequest {
    final MpiCommunicator owner;
    final CommOp.Kind kind;
    final MemorySegment cell;
    final String what;
    final SourceLocation where;
    private MemorySegment[] buffers;
    private SourceLocation waitedAt;

    MpiCollectiveRequest(MpiCommunicator owner, CommOp.Kind kind, MemorySegment cell, String what,
                         SourceLocation where, MemorySegment... buffers) {
        this.owner = owner;
        this.kind = kind;
        this.cell = cell;
        this.what = what;
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

    @Override
    public String describe() {
        return String.format("%s%s on '%s' at %s", kind, what, owner.name(), where);
    }

    @Override
    public String toString() {
        return describe() + (buffers == null ? " (completed)" : "");
    }
}
