package dev.weft.backends.cpu.kernels;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link DataMovement#fill} (a reduction's initial value, a pad's) sets exactly the first n elements to the value's
 * bits, in every dtype, for zero (one bulk fill), negative zero, NaN, infinities and other values (doubling), at
 * lengths around the doubling's steps; the elements after them are untouched.
 */
class FillTest {
    private static final long[] LENGTHS = {0, 1, 2, 3, 7, 8, 31, 32, 33, 1000, 4097};
    private static final double[] VALUES = {0, -0.0, 1, -2.5, Double.NaN, Double.NEGATIVE_INFINITY, 7e20};

    @ParameterizedTest
    @EnumSource(DType.class)
    void theFirstNElementsHoldTheValueBitForBit(DType t) {
        long es = t.byteSize();
        for (double v : VALUES) {
            for (long n : LENGTHS) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment value = arena.allocate(es, 8);
                    Scalars.setDouble(t, value, 0, v);
                    MemorySegment out = arena.allocate((n + 5) * es, 8);
                    out.fill((byte) 0x5a);
                    DataMovement.fill(t, out, n, value);
                    for (long i = 0; i < n; i++) {
                        assertThat(out.asSlice(i * es, es).toArray(JAVA_BYTE))
                                .as("%s %s n=%d element %d", t, v, n, i)
                                .isEqualTo(value.toArray(JAVA_BYTE));
                    }
                    for (long i = n * es; i < (n + 5) * es; i++) {
                        assertThat(out.get(JAVA_BYTE, i)).as("%s past n=%d", t, n)
                                .isEqualTo((byte) 0x5a);
                    }
                }
            }
        }
    }
}
