package dev.weft.backends.gpu.nccl;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.spi.SourceLocation;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the {@code weft.nccl.*} handlers of one executable share: the process's NCCL communicators, the executor's
 * device memory and local reduction kernels, and the nonblocking requests in flight.
 *
 * <p>A request travels through a program as its i64 request buffer: the {@code isend}/{@code irecv} handler files
 * it under that buffer's device address, which the executor passes unchanged to the {@code wait} that consumes
 * it. The buffer's contents are never written.
 */
public final class NcclContext {
    /** A request in flight and, for a receive, the device buffer it fills (else 0). */
    record Pending(PendingRequest request, long buffer) {
    }

    private final NcclCommunicators comms;
    private final DeviceMemory memory;
    private final LocalReduce localReduce;
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();

    public NcclContext(NcclCommunicators comms, DeviceMemory memory, LocalReduce localReduce) {
        this.comms = comms;
        this.memory = memory;
        this.localReduce = localReduce;
    }

    /**
     * The NCCL communicator over {@code bootstrap}'s ranks, created collectively on first use (see
     * {@link NcclCommunicators#handle}).
     */
    NcclHandle handle(Communicator bootstrap, SourceLocation where) {
        return comms.handle(bootstrap, where);
    }

    /** The NCCL communicator {@code handle} queueing on {@code stream}, with this context's device memory. */
    NcclCommunicator on(NcclHandle handle, long stream) {
        return new NcclCommunicator(handle, stream, memory);
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
}
