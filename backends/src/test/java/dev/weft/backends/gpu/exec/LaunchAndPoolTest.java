package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.backends.gpu.ptx.Launch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Launch shapes and the buffer pool, with a fake allocator. */
class LaunchAndPoolTest {
    @Test
    void gridStrideLaunchesCoverSmallInputsAndCapLargeOnes() {
        assertThat(Launch.gridStride(0)).isEqualTo(new Launch(1, 1, 1, 256, 1));
        assertThat(Launch.gridStride(1000)).isEqualTo(new Launch(4, 1, 1, 256, 1));
        assertThat(Launch.gridStride(1024)).isEqualTo(new Launch(4, 1, 1, 256, 1));
        assertThat(Launch.gridStride(1L << 40)).isEqualTo(new Launch(4096, 1, 1, 256, 1));
        assertThat(Launch.blockPerOutput(12)).isEqualTo(new Launch(12, 1, 1, 256, 1));
    }

    @Test
    void sizeClassesArePowersOfTwoThenMultiplesOfTwoMebibytes() {
        assertThat(BufferPool.sizeClass(0)).isEqualTo(256);
        assertThat(BufferPool.sizeClass(257)).isEqualTo(512);
        assertThat(BufferPool.sizeClass(4096)).isEqualTo(4096);
        assertThat(BufferPool.sizeClass((1 << 20) + 1)).isEqualTo(2 << 20);
        assertThat(BufferPool.sizeClass(5L << 20)).isEqualTo(6L << 20);
    }

    @Test
    void buffersAreReusedBySizeClassAndFreedOnClose() {
        List<Long> allocated = new ArrayList<>();
        List<DeviceBuffer> freed = new ArrayList<>();
        BufferPool pool = new BufferPool(new BufferPool.Allocator() {
            @Override
            public DeviceBuffer allocate(long bytes) {
                allocated.add(bytes);
                return new DeviceBuffer(null, 4096L * allocated.size(), bytes);
            }

            @Override
            public void free(DeviceBuffer buffer) {
                freed.add(buffer);
            }
        });
        DeviceBuffer a = pool.take(1000);
        pool.give(a);
        assertThat(pool.take(700)).isSameAs(a);
        DeviceBuffer b = pool.take(1000);
        assertThat(b).isNotSameAs(a);
        pool.give(a);
        pool.give(b);
        assertThat(allocated).containsExactly(1024L, 1024L);
        assertThat(pool.allocations()).isEqualTo(2);
        pool.close();
        assertThat(freed).containsExactlyInAnyOrder(a, b);
    }

    @Test
    void aFrameReturnsABufferWhenItsLastSlotIsReleasedButKeepsPinnedOnes() {
        List<DeviceBuffer> given = new ArrayList<>();
        BufferPool pool = new BufferPool(new BufferPool.Allocator() {
            @Override
            public DeviceBuffer allocate(long bytes) {
                return new DeviceBuffer(null, 0, bytes);
            }

            @Override
            public void free(DeviceBuffer buffer) {
                given.add(buffer);
            }
        });
        DeviceBuffer shared = pool.take(8), constant = pool.take(8);
        java.util.Map<DeviceBuffer, Boolean> pinned = new java.util.IdentityHashMap<>();
        pinned.put(constant, true);
        GpuFrame f = new GpuFrame(4, pool, pinned);
        f.define(0, shared);
        f.define(1, shared);
        f.define(2, constant);
        f.release(0);
        assertThat(pool.take(8)).isNotSameAs(shared);
        f.release(1);
        f.release(2);
        assertThat(f.live()).isZero();
        assertThat(pool.take(8)).isSameAs(shared);
        assertThat(pool.take(8)).isNotSameAs(constant);
    }
}
