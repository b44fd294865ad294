package dev.weft.backends.gpu.exec;

import dev.weft.backends.gpu.ptx.Kernel;
import java.lang.foreign.MemorySegment;

/**
 * What one executable lends its {@link GpuExtension}s: its stream, its buffer pool, and the means to queue copies
 * and extra kernels on that stream. Everything is ordered on {@link #stream()} and nothing waits for the device.
 * Used on the executor's thread, with its CUDA context current.
 */
public interface GpuResources {
    /** The executable's stream, on which all of its work is queued. */
    GpuStream stream();

    /**
     * A buffer of at least {@code bytes} bytes from the executable's pool, for work queued on {@link #stream()}
     * from now on. It goes back through {@link #give}, or to the executor as a custom call's result (see
     * {@link GpuCustomCallHandler}).
     */
    DeviceBuffer take(long bytes);

    /**
     * Returns a buffer from {@link #take} to the pool. Work queued before this call may still use it: the pool
     * hands it out again only to work queued after, on the same stream, and not while work that custom calls
     * batched is still to be queued ({@link GpuExtension#flush}).
     */
    void give(DeviceBuffer buffer);

    /** Queues a copy of {@code bytes} bytes from device address {@code src} to {@code dst}. */
    void copy(long dst, long src, long bytes);

    /**
     * Queues the upload of {@code host} to device address {@code dst}; {@code host} may be reused on return. Meant
     * for a few words (the bytes travel as memset values, not as a host-to-device copy).
     */
    void upload(MemorySegment host, long dst);

    /**
     * Queues {@code kernel} with the device addresses {@code params} as its pointer parameters, loading its PTX
     * into the executable's CUDA context on its first launch.
     */
    void launch(Kernel kernel, long... params);
}
