package dev.weft.backends.gpu.nccl;

/**
 * CUDA events on the executor's streams, implemented by the GPU executor: how a nonblocking NCCL request marks
 * its completion point and how {@code wait} orders later work after it, without the host ever blocking.
 */
public interface StreamEvents {
    /** Creates an event and records it on {@code stream} ({@code cuEventCreate} + {@code cuEventRecord}); its handle. */
    long record(long stream);

    /** Makes work queued on {@code stream} from now on wait for {@code event} ({@code cuStreamWaitEvent}). */
    void wait(long stream, long event);

    /** Releases {@code event}, which {@link #wait} has been called for ({@code cuEventDestroy}). */
    void destroy(long event);
}
