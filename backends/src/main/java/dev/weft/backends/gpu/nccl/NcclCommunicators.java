package dev.weft.backends.gpu.nccl;

import dev.weft.backends.comm.Communicator;
import dev.weft.spi.SourceLocation;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The NCCL communicators of one process over one NCCL library: one per bootstrap communicator, created on first
 * use and then shared by every module (creating one is collective and slow). Their requests record completion
 * with {@code events}.
 */
public final class NcclCommunicators {
    private final NcclLibrary nccl;
    private final StreamEvents events;
    private final Map<Communicator, NcclHandle> comms = new ConcurrentHashMap<>();

    public NcclCommunicators(NcclLibrary nccl, StreamEvents events) {
        this.nccl = nccl;
        this.events = events;
    }

    /**
     * The NCCL communicator over {@code bootstrap}'s ranks, created collectively on the first call (every rank of
     * {@code bootstrap} must make that call, with the CUDA device it uses current). No lock is held while
     * creating, since ranks may be threads of this process; a bootstrap handle is used by one thread at a time, so
     * none is created twice.
     */
    NcclHandle handle(Communicator bootstrap, SourceLocation where) {
        NcclHandle c = comms.get(bootstrap);
        if (c == null) {
            c = NcclHandle.create(nccl, events, bootstrap, where);
            comms.put(bootstrap, c);
        }
        return c;
    }
}
