package dev.weft.backends.cpu.exec;

import dev.weft.Tensor;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The bits of a tensor's elements, for bit-for-bit comparisons in tests. */
final class TensorBits {
    private TensorBits() {
    }

    /** The elements' bits, as the dtype (f32, f64, i32 or i64) stores them. */
    static long[] of(Tensor t) {
        MemorySegment s = TensorAccess.data(t);
        long[] out = new long[(int) t.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (t.dtype()) {
                case F32 -> Float.floatToRawIntBits(s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i));
                case F64 -> Double.doubleToRawLongBits(s.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i));
                case I32 -> s.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
                case I64 -> s.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
                default -> throw new IllegalArgumentException(t.dtype().name());
            };
        }
        return out;
    }
}
