package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assumptions.assumeThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NativeMemoryTest {
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 1000, 1024, 1025, 100_000, 2L << 20, (3L << 20) + 5})
    void segmentsAreZeroedAlignedAndWritableToTheEnd(long bytes) {
        MemorySegment s = NativeMemory.allocate(bytes);
        assertThat(s.byteSize()).isEqualTo(Math.max(1, bytes));
        assertThat(s.address() % 64).isZero();
        for (long i = 0; i < s.byteSize(); i += 4093) {
            assertThat(s.get(ValueLayout.JAVA_BYTE, i)).isZero();
        }
        s.set(ValueLayout.JAVA_BYTE, s.byteSize() - 1, (byte) 7);
        assertThat(s.get(ValueLayout.JAVA_BYTE, s.byteSize() - 1)).isEqualTo((byte) 7);
    }

    @ParameterizedTest
    @ValueSource(longs = {16, 4L << 20})
    void buffersDoNotOverlap(long bytes) {
        MemorySegment a = NativeMemory.allocate(bytes);
        MemorySegment b = NativeMemory.allocate(bytes);
        a.fill((byte) 1);
        b.fill((byte) 2);
        assertThat(a.get(ValueLayout.JAVA_BYTE, bytes - 1)).isEqualTo((byte) 1);
        assertThat(b.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 2);
    }

    @Test
    void aFreedLargeBufferIsReusedAndZeroedAgain() throws InterruptedException {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = (6L << 20) + 12_345;
        MemorySegment first = NativeMemory.allocateUninitialized(bytes);
        long address = first.address();
        first.fill((byte) 0x5A);
        first = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (MappedBuffers.pooledBytes() < (8L << 20) && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        MemorySegment again = NativeMemory.allocate(bytes);
        assertThat(again.address()).as("the pooled mapping is handed out again").isEqualTo(address);
        for (long i = 0; i < bytes; i += 4093) {
            assertThat(again.get(ValueLayout.JAVA_BYTE, i)).isZero();
        }
        assertThat(again.get(ValueLayout.JAVA_BYTE, bytes - 1)).isZero();
    }

    /**
     * 40 dropped buffers of 64 MiB would hold 2.5 GiB without pacing. With it, what is outstanding stays within the
     * budget's ceiling (its floor grows while collections come often; the budget also adapts to the bytes live after
     * each collection, which a slow cleaner thread can overstate once), so the bound here is loose on purpose.
     */
    @Test
    void droppedBuffersAreCollectedBeforeTheMappedBytesGrowWithoutBound() {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = 64L << 20;
        long bound = MemoryPacer.outstandingBytes() + MemoryPacer.CEILING + 2 * bytes;
        MemorySegment kept = null;
        for (int i = 0; i < 40; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
            assertThat(MemoryPacer.outstandingBytes()).as("after %d buffers of 64 MiB", i + 1)
                    .isLessThanOrEqualTo(bound);
        }
        assertThat(kept.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 39);
    }

    /**
     * A loop that drops a large buffer per allocation gets its buffers back from the pool once collections have run:
     * its mappings stay a small set (about the budget's worth) however many buffers it drops. Should the budget's
     * floor grow while the mappings are counted (collections come far more often than five times their duration
     * here, and a machine may count this thread's page faults as busy cores), the loop maps what the floor grew by.
     */
    @Test
    void aLoopThatDropsLargeBuffersReusesPooledMappings() {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = 32L << 20;
        MemorySegment kept = null;
        for (int i = 0; i < 100; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
        }
        long mapped = MappedBuffers.mappings();
        long floor = MemoryPacer.floor();
        for (int i = 0; i < 40; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
        }
        assertThat(kept.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 39);
        long grown = Math.max(0, MemoryPacer.floor() - floor) / bytes;
        assertThat(MappedBuffers.mappings() - mapped)
                .as("new mappings for 40 dropped buffers of 32 MiB, the floor grown by %d of them", grown)
                .isLessThanOrEqualTo(10 + grown);
    }

    /**
     * When collections start less than five times their duration apart and the process kept its share of cores
     * busy, the floor grows fourfold, up to the ceiling; when they start more than forty times apart, it halves, down
     * to the least floor; otherwise it stays.
     */
    @Test
    void theBudgetsFloorFollowsWhatCollectionsCost() {
        long ms = 1_000_000L;
        long floor = MemoryPacer.FLOOR;
        assertThat(MemoryPacer.adapted(floor, 60 * ms, 20 * ms, 100)).as("every 60 ms, 20 ms each")
                .isEqualTo(4 * floor);
        assertThat(MemoryPacer.adapted(floor, 60 * ms, 20 * ms, 60)).as("cores to spare").isEqualTo(floor);
        assertThat(MemoryPacer.adapted(2 * floor, 60 * ms, 20 * ms, 95)).isEqualTo(MemoryPacer.CEILING);
        assertThat(MemoryPacer.adapted(MemoryPacer.CEILING, 60 * ms, 20 * ms, 100)).isEqualTo(MemoryPacer.CEILING);
        assertThat(MemoryPacer.adapted(floor, 120 * ms, 20 * ms, 100)).as("every 120 ms").isEqualTo(floor);
        assertThat(MemoryPacer.adapted(2 * floor, 800 * ms, 20 * ms, 100)).as("every 800 ms").isEqualTo(2 * floor);
        assertThat(MemoryPacer.adapted(MemoryPacer.CEILING, 900 * ms, 20 * ms, 100))
                .isEqualTo(MemoryPacer.CEILING / 2);
        assertThat(MemoryPacer.adapted(floor, 900 * ms, 20 * ms, 100)).isEqualTo(floor);
    }

    /**
     * The allocation that leaves less room in the budget than its own size asks for a collection without waiting
     * for it, so that the buffers it finds dead are back before the budget runs out; the collection measures the
     * live bytes, and the budget grows with them. (It starts after a collection, so that other tests' dropped
     * buffers do not make an earlier allocation ask.)
     */
    @Test
    void aCollectionIsAskedForBeforeTheBudgetRunsOutAndTheBudgetGrowsWithTheLiveBytes()
            throws InterruptedException {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = 16L << 20;
        List<MemorySegment> live = new ArrayList<>();
        MemoryPacer.awaitCollection();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (MemoryPacer.collecting() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        long before = MemoryPacer.collections();
        boolean reached = false;
        while (!reached && live.size() < 64) {
            live.add(NativeMemory.allocateUninitialized(bytes));
            // read once per allocation: the collection the last one asked for may raise the budget at any moment
            reached = MemoryPacer.overBudget(bytes);
        }
        assertThat(reached).as("no allocation exceeded the budget; one reached it").isTrue();
        deadline = System.nanoTime() + 10_000_000_000L;
        while (MemoryPacer.collections() == before && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(MemoryPacer.collections()).as("collections done").isGreaterThan(before);
        assertThat(MemoryPacer.overBudget(live.size() * bytes / 2))
                .as("room for half as many again as the %d live buffers", live.size()).isFalse();
        assertThat(live).allSatisfy(s -> assertThat(s.byteSize()).isEqualTo(bytes));
    }
}
