package dev.weft.backends.comm.mpi;

import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;

/** An MPI nonblocking collective ({@code MPI_Iallreduce}, ...), holding the buffers MPI reads and writes. */
final class MpiCollectiveRequest extends MpiPendingRequest {
    final CommOp.Kind kind;
    final String what;

    MpiCollectiveRequest(MpiCommunicator owner, CommOp.Kind kind, MemorySegment cell, String what,
                         SourceLocation where, MemorySegment... buffers) {
        super(owner, cell, where, buffers);
        this.kind = kind;
        this.what = what;
    }

    @Override
    int peer() {
        return -1;
    }

    @Override
    public String describe() {
        return String.format("%s%s on '%s' at %s", kind, what, owner.name(), where);
    }
}
