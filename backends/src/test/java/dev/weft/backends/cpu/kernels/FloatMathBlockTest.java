package dev.weft.backends.cpu.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FloatMathBlock} equals {@link FloatMath} bit for bit: on a strided sweep of all floats, next to every
 * multiple of π/2, on signed zeros, subnormals and the range limits within a block that the vector path
 * computes, on blocks that hold an argument the vector path rejects, and for every length of a block.
 */
class FloatMathBlockTest {
    private static final int SIZE = FloatMathBlock.SIZE;
    /** Odd stride through the bit patterns of magnitudes up to 2^20: every residue of the low bits. */
    private static final int STRIDE = 31;
    /** Stride beyond 2^20, where both sides take {@link Math}'s slow reduction of huge arguments. */
    private static final int HUGE_STRIDE = 1021;
    private static final int LIMIT_BITS = Float.floatToRawIntBits(0x1p20f);
    /** Largest k with k·π/2 ≤ 2^20. */
    private static final int MAX_QUADRANT = (int) (0x1p20 / (Math.PI / 2));

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos", "exp"})
    void equalsTheScalarFunctionOnAStridedSweepOfAllFloats(String fn) {
        Checker c = new Checker(fn);
        long bits = 0;
        while (bits < 1L << 32) {
            int n = 0;
            for (; n < SIZE && bits < 1L << 32; n++) {
                c.x[n] = Float.intBitsToFloat((int) bits);
                bits += (bits & Integer.MAX_VALUE) <= LIMIT_BITS ? STRIDE : HUGE_STRIDE;
            }
            c.check(n);
        }
        assertThat(c.checked).isGreaterThan(2L * LIMIT_BITS / STRIDE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos"})
    void equalsTheScalarFunctionNextToEveryMultipleOfHalfPi(String fn) {
        Checker c = new Checker(fn);
        int n = 0;
        for (int k = 1; k <= MAX_QUADRANT; k++) {
            int bits = Float.floatToRawIntBits((float) (k * (Math.PI / 2)));
            for (int d = -3; d <= 3; d++) {
                c.x[n++] = Float.intBitsToFloat(bits + d);
                c.x[n++] = -Float.intBitsToFloat(bits + d);
                if (n > SIZE - 2) {
                    c.check(n);
                    n = 0;
                }
            }
        }
        c.check(n);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos", "exp"})
    void signedZerosSubnormalsAndTheRangeLimitsTakeTheVectorPath(String fn) {
        float limit = fn.equals("exp") ? 104f : 0x1p20f;
        float[] values = {0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 0x1p-140f, -0x1.fffffcp-127f,
            Float.MIN_NORMAL, -Float.MIN_NORMAL, 1f, -1f, limit, -limit, Math.nextDown(limit), -Math.nextDown(limit),
            88.72283f, 88.72284f, -103.97208f, -103.9721f};
        Checker c = new Checker(fn);
        for (int i = 0; i < SIZE; i++) {
            c.x[i] = values[i % values.length];
        }
        c.check(SIZE);
        if (fn.equals("sin")) {
            assertThat(Float.floatToRawIntBits(c.y[1])).as("sin(-0)").isEqualTo(Integer.MIN_VALUE);
            assertThat(c.y[3]).as("sin(-MIN_VALUE)").isEqualTo(-Float.MIN_VALUE);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos", "exp"})
    void aBlockHoldingAnArgumentOutsideTheReducedRangeEqualsTheScalarFunction(String fn) {
        float[] outside = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Math.nextUp(0x1p20f),
            -0x1p24f, 1e30f, -Float.MAX_VALUE, Math.nextUp(104f), -105f, Float.intBitsToFloat(0x7fc01234)};
        Random rnd = new Random(11);
        Checker c = new Checker(fn);
        for (float v : outside) {
            for (int lane : new int[] {0, 7, SIZE / 2, SIZE - 1}) {
                for (int i = 0; i < SIZE; i++) {
                    c.x[i] = (float) (rnd.nextGaussian() * 40);
                }
                c.x[lane] = v;
                c.check(SIZE);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos", "exp"})
    void everyBlockLengthInPlaceAndApartLeavesTheRestAlone(String fn) {
        Random rnd = new Random(fn.hashCode());
        FloatMathBlock block = FloatMathBlock.local();
        for (int n = 0; n <= SIZE; n++) {
            float[] x = new float[SIZE + 1];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) (rnd.nextGaussian() * 20);
            }
            float[] y = new float[SIZE + 1];
            Arrays.fill(y, 42f);
            float[] inPlace = x.clone();
            apply(block, fn, x, y, n);
            apply(block, fn, inPlace, inPlace, n);
            for (int i = 0; i < x.length; i++) {
                float want = i < n ? scalar(fn, x[i]) : 42f;
                assertThat(Float.floatToRawIntBits(y[i])).as("%s n=%d y[%d]", fn, n, i)
                        .isEqualTo(Float.floatToRawIntBits(want));
                assertThat(Float.floatToRawIntBits(inPlace[i])).as("%s n=%d in place [%d]", fn, n, i)
                        .isEqualTo(Float.floatToRawIntBits(i < n ? want : x[i]));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = ElementwiseOp.class, names = {"SIN", "COS", "EXP"})
    void theEagerKernelEqualsTheScalarFunctionOnUnalignedBuffersOfAnyLength(ElementwiseOp op) {
        Random rnd = new Random(op.ordinal());
        for (int n : new int[] {0, 1, SIZE - 1, SIZE, SIZE + 1, 3 * SIZE + 7}) {
            for (long offset : new long[] {0, 1, 3, 4 * 5}) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment a = arena.allocate(4L * n + offset).asSlice(offset);
                    MemorySegment o = arena.allocate(4L * n + 8).asSlice(3);
                    float[] x = new float[n];
                    for (int i = 0; i < n; i++) {
                        x[i] = i % 97 == 5 ? Float.NaN : (float) (rnd.nextGaussian() * 30);
                        a.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, x[i]);
                    }
                    Elementwise.unary(op, DType.F32, a, o, n);
                    for (int i = 0; i < n; i++) {
                        assertThat(Float.floatToRawIntBits(o.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i)))
                                .as("%s n=%d offset=%d [%d]", op, n, offset, i)
                                .isEqualTo(Float.floatToRawIntBits(scalar(op.name().toLowerCase(), x[i])));
                    }
                }
            }
        }
    }

    private static void apply(FloatMathBlock block, String fn, float[] x, float[] y, int n) {
        switch (fn) {
            case "sin" -> block.sin(x, y, n);
            case "cos" -> block.cos(x, y, n);
            default -> block.exp(x, y, n);
        }
    }

    private static float scalar(String fn, float x) {
        return switch (fn) {
            case "sin" -> FloatMath.sin(x);
            case "cos" -> FloatMath.cos(x);
            default -> FloatMath.exp(x);
        };
    }

    private interface FloatUnaryOperator {
        float apply(float x);
    }

    /** Runs one function on blocks of {@link #x} and compares each element with the scalar function's bits. */
    private static final class Checker {
        final float[] x = new float[SIZE];
        final float[] y = new float[SIZE];
        private final String fn;
        private final FloatUnaryOperator scalar;
        private final FloatMathBlock block = FloatMathBlock.local();
        long checked;

        Checker(String fn) {
            this.fn = fn;
            this.scalar = switch (fn) {
                case "sin" -> FloatMath::sin;
                case "cos" -> FloatMath::cos;
                default -> FloatMath::exp;
            };
        }

        void check(int n) {
            apply(block, fn, x, y, n);
            for (int i = 0; i < n; i++) {
                int want = Float.floatToRawIntBits(scalar.apply(x[i]));
                if (Float.floatToRawIntBits(y[i]) != want) {
                    assertThat(Float.floatToRawIntBits(y[i])).as("%s(%s) bits", fn, x[i]).isEqualTo(want);
                }
            }
            checked += n;
        }
    }
}
