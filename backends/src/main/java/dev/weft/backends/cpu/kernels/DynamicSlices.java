package dev.weft.backends.cpu.kernels;

import dev.weft.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The run-time start of a {@code dynamic_slice} or {@code dynamic_update_slice} block. */
public final class DynamicSlices {
    private DynamicSlices() {
    }

    /**
     * The start of a block of {@code sizes} in {@code dims}, read from the integer scalars {@code operands[first]},
     * {@code operands[first + 1]}, ... of {@code types}, each clamped to {@code [0, dim - size]} as StableHLO says.
     */
    public static long[] starts(DType[] types, MemorySegment[] operands, int first, long[] dims, long[] sizes) {
        long[] start = new long[dims.length];
        for (int i = 0; i < dims.length; i++) {
            MemorySegment s = operands[first + i];
            long v = types[first + i] == DType.I64 ? s.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                    : s.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
            start[i] = Math.clamp(v, 0, dims[i] - sizes[i]);
        }
        return start;
    }
}
