package dev.weft.backends.gpu.nccl;

import java.lang.foreign.MemorySegment;

/**
 * Stream-ordered device memory, implemented by the GPU executor: the buffers the NCCL handlers need beyond the
 * operand and result buffers the executor hands them (a posted receive, the gathered contributions of a custom
 * reduction, a barrier's scratch element).
 */
public interface DeviceMemory {
    /**
     * A device buffer of {@code bytes} bytes, usable by work queued on {@code stream} from now on. A handler that
     * returns it as a result hands it to the executor, which frees it like the buffers it allocates itself.
     */
    long allocate(long stream, long bytes);

    /** Frees {@code ptr} once the work queued on {@code stream} so far has finished with it. */
    void free(long stream, long ptr);

    /** Queues a copy of {@code bytes} bytes from device {@code src} to device {@code dst} on {@code stream}. */
    void copy(long stream, long dst, long src, long bytes);

    /** Queues a copy of {@code host} to device {@code dst} on {@code stream}; {@code host} may be reused on return. */
    void upload(long stream, MemorySegment host, long dst);
}
