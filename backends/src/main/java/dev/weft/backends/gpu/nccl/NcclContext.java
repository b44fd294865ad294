package dev.weft.backends.gpu.nccl;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.spi.SourceLocation;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the {@code weft.nccl.*} handlers of one process share: the NCCL library, the executor's stream events,
 * device memory and local reduction kernels, the NCCL communicator of each bootstrap communicator (created on
 * first use, then reused by every module), and the nonblocking requests in flight.
 *
 * <p>A request travels through a program as its i64 request buffer: the {@code isend}/{@code irecv} handler files
 * it under that buffer's device address, which the executor passes unchanged to the {@code wait} that consumes
 * it. The buffer's contents are never written.
 */
public final class NcclContext implements AutoCloseable {
    /** A request in flight and, for a receive, the device buffer it fills (else 0). */
    record Pending(NcclCommunicator.Request request, long buffer) {
    }

    private final NcclLibrary nccl;
    private final StreamEvents events;
    private final DeviceMemory memory;
    private final LocalReduce localReduce;
    private final Map<Communicator, NcclCommunicator> comms = new ConcurrentHashMap<>();
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();

    public NcclContext(NcclLibrary nccl, StreamEvents events, DeviceMemory memory, LocalReduce localReduce) {
        this.nccl = nccl;
        this.events = events;
        this.memory = memory;
        this.localReduce = localReduce;
    }

    /**
     * The NCCL communicator over {@code bootstrap}'s ranks, created collectively on the first call (every rank of
     * {@code bootstrap} must make that call). No lock is held while creating, since ranks may be threads of this
     * process; a bootstrap handle is used by one thread at a time, so none is created twice.
     */
    public NcclCommunicator communicator(Communicator bootstrap, SourceLocation where) {
        NcclCommunicator c = comms.get(bootstrap);
        if (c == null) {
            c = NcclCommunicator.create(nccl, events, bootstrap, where);
            comms.put(bootstrap, c);
        }
        return c;
    }

    DeviceMemory memory() {
        return memory;
    }

    LocalReduce localReduce() {
        return localReduce;
    }

    /** Files {@code p} under the device address of its request buffer. */
    void put(long requestBuffer, Pending p) {
        pending.put(requestBuffer, p);
    }

    /** Takes out the request filed under {@code requestBuffer}; fails if there is none. */
    Pending take(long requestBuffer, SourceLocation where) {
        Pending p = pending.remove(requestBuffer);
        if (p == null) {
            throw new CommException(where, "wait: no request is in flight for request buffer 0x"
                    + Long.toHexString(requestBuffer) + " (it was never posted, or was already waited)");
        }
        return p;
    }

    /** Destroys every NCCL communicator created here. */
    @Override
    public void close() {
        comms.values().forEach(NcclCommunicator::close);
        comms.clear();
    }
}
