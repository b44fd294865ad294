package dev.weft.backends.comm.mpi;

import dev.weft.DType;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;

/** An MPI {@code isend} or {@code irecv}, holding the buffer MPI reads or writes. */
final class MpiRequest extends MpiPendingRequest {
    final boolean receive;
    final DType dtype;
    final long count;
    final int peer;
    final int tag;

    MpiRequest(MpiCommunicator owner, boolean receive, MemorySegment cell, MemorySegment buf, DType dtype, long count,
               int peer, int tag, SourceLocation where) {
        super(owner, cell, where, buf);
        this.receive = receive;
        this.dtype = dtype;
        this.count = count;
        this.peer = peer;
        this.tag = tag;
    }

    @Override
    int peer() {
        return peer;
    }

    @Override
    public String describe() {
        return String.format("%s(%d x %s) on '%s' %s rank %d tag %d at %s", receive ? "irecv" : "isend", count,
                dtype.specName(), owner.name(), receive ? "from" : "to", peer, tag, where);
    }
}
