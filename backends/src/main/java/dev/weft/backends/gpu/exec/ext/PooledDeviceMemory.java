package dev.weft.backends.gpu.exec.ext;

import dev.weft.backends.gpu.exec.DeviceBuffer;
import dev.weft.backends.gpu.exec.GpuResources;
import dev.weft.backends.gpu.nccl.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link DeviceMemory} from one executable's buffer pool. All work is ordered on the executable's stream, so a
 * buffer freed here is reused only by work queued after everything that used it (the pool holds it back while an
 * NCCL group is open): no host wait and no stream-ordered allocator needed. Only the executable's stream is
 * accepted.
 */
final class PooledDeviceMemory implements DeviceMemory {
    private final GpuResources resources;
    private final Map<Long, DeviceBuffer> allocated = new HashMap<>();

    PooledDeviceMemory(GpuResources resources) {
        this.resources = resources;
    }

    @Override
    public long allocate(long stream, long bytes) {
        check(stream);
        DeviceBuffer b = resources.take(bytes);
        allocated.put(b.address(), b);
        return b.address();
    }

    @Override
    public void free(long stream, long ptr) {
        check(stream);
        resources.give(handOver(ptr));
    }

    @Override
    public void copy(long stream, long dst, long src, long bytes) {
        check(stream);
        if (bytes > 0) {
            resources.copy(dst, src, bytes);
        }
    }

    @Override
    public void upload(long stream, MemorySegment host, long dst) {
        check(stream);
        resources.upload(host, dst);
    }

    /** The buffer at {@code ptr}, from {@link #allocate}, whose ownership leaves this memory (to the executor). */
    DeviceBuffer handOver(long ptr) {
        DeviceBuffer b = allocated.remove(ptr);
        if (b == null) {
            throw new IllegalArgumentException("device address 0x" + Long.toHexString(ptr)
                    + " was not allocated here or was already freed");
        }
        return b;
    }

    private void check(long stream) {
        if (stream != resources.stream().handle()) {
            throw new IllegalArgumentException("stream 0x" + Long.toHexString(stream)
                    + " is not the executable's stream 0x" + Long.toHexString(resources.stream().handle()));
        }
    }
}
