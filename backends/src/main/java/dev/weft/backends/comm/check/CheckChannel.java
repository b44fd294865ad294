package dev.weft.backends.comm.check;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The check's channel for one rank's communicator: a private duplicate, created at the first check and kept, so
 * that the check's messages never match the user's. Its monitor serialises the checks of one rank on one
 * communicator.
 */
final class CheckChannel {
    private static final Map<Communicator, CheckChannel> CHANNELS = new WeakHashMap<>();

    private final Communicator comm;
    private Communicator dup;

    private CheckChannel(Communicator comm) {
        this.comm = comm;
    }

    /** The channel of {@code comm} (communicators compare by identity; each rank has its own). */
    static CheckChannel of(Communicator comm) {
        synchronized (CHANNELS) {
            return CHANNELS.computeIfAbsent(comm, CheckChannel::new);
        }
    }

    Communicator comm() {
        return comm;
    }

    /** Every rank's {@code row}, in rank order; collective on the private duplicate. */
    long[][] allgather(long[] row, SourceLocation where) {
        if (dup == null) {
            dup = comm.privateDup(where);
        }
        int size = comm.size();
        MemorySegment in = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, Math.max(1, row.length));
        MemorySegment.copy(row, 0, in, ValueLayout.JAVA_LONG, 0, row.length);
        MemorySegment out = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, Math.max(1, (long) row.length * size));
        dup.allgather(in, out, DType.I64, row.length, where);
        long[][] rows = new long[size][];
        for (int r = 0; r < size; r++) {
            rows[r] = out.asSlice((long) r * row.length * Long.BYTES, (long) row.length * Long.BYTES)
                    .toArray(ValueLayout.JAVA_LONG);
        }
        return rows;
    }
}
