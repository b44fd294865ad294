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
     * Dropped buffers of 64 MiB, twice the budget plus margin of them: the young bytes and the pooled ones stay within
     * budget plus margin (plus the allocation under way). The buffers outstanding may also hold those live when the
     * last collection started, which it could not free: the one {@code kept} and, when the collection started while
     * an allocation was under way (the collector runs on its own thread), the one being handed out. So they grow by
     * no more than budget plus margin plus two buffers.
     */
    @Test
    void droppedBuffersStayWithinTheBudgetPlusMargin() {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = 64L << 20;
        long bound = MemoryPacer.budgetWith(bytes) * 5 / 4 + bytes;
        long outstandingBound = bound + bytes;
        long before = MemoryPacer.outstandingBytes();
        MemorySegment kept = null;
        int count = (int) (2 * (MemoryPacer.budgetWith(bytes) * 5 / 4) / bytes);
        for (int i = 0; i < count; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
            assertThat(MappedBuffers.youngAndPooledBytes())
                    .as("young and pooled bytes after %d buffers of 64 MiB", i + 1).isLessThanOrEqualTo(bound);
            assertThat(MemoryPacer.outstandingBytes() - before).as("outstanding after %d", i + 1)
                    .isLessThanOrEqualTo(outstandingBound);
        }
        assertThat(kept.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) (count - 1));
    }

    /**
     * A loop that drops a large buffer per allocation gets its buffers back from the pool once collections have run:
     * its mappings stay a small set however many buffers it drops.
     */
    @Test
    void aLoopThatDropsLargeBuffersReusesPooledMappings() {
        assumeThat(MappedBuffers.AVAILABLE).as("mmap (Linux)").isTrue();
        long bytes = 32L << 20;
        int cycle = (int) (MemoryPacer.budgetWith(bytes) * 5 / 4 / bytes);
        MemorySegment kept = null;
        for (int i = 0; i < 3 * cycle; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
        }
        long mapped = MappedBuffers.mappings();
        for (int i = 0; i < 40; i++) {
            kept = NativeMemory.allocateUninitialized(bytes);
            kept.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
        }
        assertThat(kept.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 39);
        assertThat(MappedBuffers.mappings() - mapped).as("new mappings for 40 dropped buffers of 32 MiB")
                .isLessThanOrEqualTo(10);
    }

    /** Unset, the budget is 64 MiB, or four of the largest buffer made so far when that is more. */
    @Test
    void theDefaultBudgetHoldsFourOfTheLargestBuffer() {
        assumeThat(Setting.MEMORY_BUDGET.text()).as("budget not set").isNull();
        assertThat(MemoryPacer.budgetWith(100L << 20)).isEqualTo(400L << 20);
        assertThat(MemoryPacer.budgetWith(1L << 20)).isGreaterThanOrEqualTo(64L << 20);
        NativeMemory.allocateUninitialized(20L << 20);
        assertThat(MemoryPacer.budget()).isGreaterThanOrEqualTo(80L << 20);
    }

    /**
     * Live buffers beyond the budget plus margin are allowed: each allocation that would exceed them waits for a
     * collection, which finds the buffers live and so no longer counts them as young.
     */
    @Test
    void liveBuffersBeyondTheBudgetAreAllowedAndCostCollections() {
        long bytes = 64L << 20;
        int count = (int) (MemoryPacer.budgetWith(bytes) * 5 / 4 / bytes) + 4;
        long before = MemoryPacer.collections();
        List<MemorySegment> live = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            live.add(NativeMemory.allocateUninitialized(bytes));
            assertThat(MemoryPacer.youngBytes()).as("young bytes after %d live buffers", i + 1)
                    .isLessThanOrEqualTo(MemoryPacer.budget() + MemoryPacer.margin() + bytes);
        }
        assertThat(MemoryPacer.collections()).as("collections done").isGreaterThan(before);
        assertThat(MemoryPacer.youngBytes()).as("young bytes").isLessThan(count * bytes);
        assertThat(live).allSatisfy(s -> assertThat(s.byteSize()).isEqualTo(bytes));
    }

}
