package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The pools of dead buffers: reuse within and across runs, never handing out a live buffer twice. */
class CpuFrameTest {
    private final LongAdder allocations = new LongAdder();
    private final CpuFrame f = new CpuFrame(0, new Supplier<?>[0], new long[] {16, 64}, allocations);

    @Test
    void deadBuffersAreReusedAcrossRunsAndNoLiveOneIsHandedOutTwice() {
        List<Buffer> first = take(0, 9);
        assertThat(first.stream().map(b -> b.segment.address()).distinct()).hasSize(9);
        first.forEach(f::drop);
        assertThat(allocations.sum()).isEqualTo(9);
        for (int run = 0; run < 3; run++) {
            f.reset();
            List<Buffer> again = take(0, 9);
            assertThat(again).containsExactlyInAnyOrderElementsOf(first);
            assertThat(allocations.sum()).as("run %d allocates nothing", run).isEqualTo(9);
            again.forEach(f::drop);
        }
        assertThat(take(1, 1).getFirst().segment.byteSize()).as("its own size class").isEqualTo(64);
    }

    @Test
    void theLastBufferDroppedIsTheFirstReused() {
        List<Buffer> bs = take(0, 3);
        bs.forEach(f::drop);
        f.reset();
        assertThat(f.allocate(0)).isSameAs(bs.get(2));
        assertThat(f.allocate(0)).isSameAs(bs.get(1));
    }

    @Test
    void scratchSegmentsAndDroppedBuffersShareTheirSizeClass() {
        Buffer b = take(0, 1).getFirst();
        f.drop(b);
        MemorySegment s = f.allocateSegment(0);
        assertThat(s).isEqualTo(b.segment);
        f.recycle(0, s);
        f.reset();
        Set<Long> seen = new HashSet<>();
        seen.add(f.allocateSegment(0).address());
        seen.add(f.allocate(0).segment.address());
        assertThat(seen).hasSize(2).contains(s.address());
        assertThat(allocations.sum()).isEqualTo(2);
    }

    /** {@code n} buffers of {@code sizeClass}, each held once (as a slot would hold it). */
    private List<Buffer> take(int sizeClass, int n) {
        List<Buffer> bs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Buffer b = f.allocate(sizeClass);
            b.refs = 1;
            bs.add(b);
        }
        return bs;
    }
}
