package dev.weft.spi;

import java.lang.foreign.MemorySegment;

/**
 * Fills memory with copies of its first block by bulk copies, no element loop: the filled prefix is copied after
 * itself until every block is there, log2 of them copies. An element loop over native memory runs at about 0.1 µs
 * an element before the JIT compiles it, and C2 then spends tenths of a second of a core compiling it; bulk copies
 * run at memory speed from the first call. For {@code Tensor.full} and the CPU kernels' fills and broadcasts.
 */
public final class BulkFill {
    private BulkFill() {
    }

    /**
     * Fills {@code copies} blocks of {@code block} bytes from byte {@code base} of {@code dst}, whose first block is
     * already there.
     */
    public static void byDoubling(MemorySegment dst, long base, long block, long copies) {
        for (long done = 1; done < copies; ) {
            long n = Math.min(done, copies - done);
            MemorySegment.copy(dst, base, dst, base + done * block, n * block);
            done += n;
        }
    }
}
