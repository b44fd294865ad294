package dev.weft.backends.comm;

import dev.weft.DType;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/** Native buffers written and read as doubles, and fake source locations, for the communicator tests. */
public final class TestBuffers {
    private TestBuffers() {
    }

    /** A location in a fictitious user file, so messages can be checked for it. */
    public static SourceLocation at(int line) {
        return new SourceLocation("User", "main", "User.java", line);
    }

    /** A native buffer of {@code values.length} elements of {@code dtype}. */
    public static MemorySegment of(DType dtype, double... values) {
        MemorySegment seg = Arena.ofAuto().allocate((long) values.length * dtype.byteSize());
        for (int i = 0; i < values.length; i++) {
            set(seg, dtype, i, values[i]);
        }
        return seg;
    }

    /** A native buffer of {@code count} elements of {@code dtype}, filled with -99 (true for bool). */
    public static MemorySegment filler(DType dtype, long count) {
        double[] v = new double[Math.toIntExact(count)];
        Arrays.fill(v, -99);
        return of(dtype, v);
    }

    public static double[] read(MemorySegment seg, DType dtype, long count) {
        double[] out = new double[Math.toIntExact(count)];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (dtype) {
                case F32 -> seg.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                case F64 -> seg.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
                case I32 -> seg.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
                case I64 -> seg.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
                case BOOL -> seg.get(ValueLayout.JAVA_BYTE, i);
            };
        }
        return out;
    }

    private static void set(MemorySegment seg, DType dtype, long i, double v) {
        switch (dtype) {
            case F32 -> seg.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) v);
            case F64 -> seg.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, v);
            case I32 -> seg.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) v);
            case I64 -> seg.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, (long) v);
            case BOOL -> seg.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
        }
    }
}
