package dev.weft.backends.comm.exec;

import dev.weft.spi.NativeMemory;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The result buffers of one compiled nonblocking collective's start: a start takes one, which its request holds
 * until the wait hands it to the executor as the result, and the wait keeps the buffer the executor offered in its
 * place for a later start. So a program running the collective again allocates no new buffer (a fresh one per
 * start cost a rank's 8 MiB allreduce four times its time, in page faults). At most {@value #KEPT} are kept.
 */
final class ResultBuffers {
    private static final int KEPT = 4;

    private final long bytes;
    private final ConcurrentLinkedDeque<MemorySegment> spare = new ConcurrentLinkedDeque<>();

    ResultBuffers(long bytes) {
        this.bytes = bytes;
    }

    /** A buffer of the result's bytes, whose contents are unspecified. */
    MemorySegment take() {
        MemorySegment s = spare.pollFirst();
        return s != null ? s : NativeMemory.allocateUninitialized(bytes);
    }

    /** Keeps {@code buffer}, which nothing else uses any more, for a later {@link #take}. */
    void give(MemorySegment buffer) {
        if (buffer.byteSize() == bytes && spare.size() < KEPT) {
            spare.push(buffer);
        }
    }
}
