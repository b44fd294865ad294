package dev.weft.backends.cpu.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.DoubleUnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link FloatMath} against {@code (float) Math.sin((double) x)} / {@code cos} / {@code exp}, within 1 ulp. */
class FloatMathTest {
    private static final int LIMIT_BITS = Float.floatToRawIntBits(0x1p20f);
    /** Odd stride through the bit patterns of [0, 2^20]: about 26 million magnitudes, every mantissa residue. */
    private static final int STRIDE = 47;
    /** Bits of 110: beyond about ±104 f32 {@code e^x} is infinite or zero. */
    private static final int EXP_SWEEP_BITS = Float.floatToRawIntBits(110f);
    /** Largest k with k·π/2 ≤ 2^20. */
    private static final int MAX_QUADRANT = (int) (0x1p20 / (Math.PI / 2));

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos"})
    void withinOneUlpOnAStridedSweepOfTheReducedRange(String fn) {
        MaxError e = new MaxError(fn);
        for (int bits = 0; bits <= LIMIT_BITS; bits += STRIDE) {
            e.check(Float.intBitsToFloat(bits));
            e.check(Float.intBitsToFloat(bits | Integer.MIN_VALUE));
        }
        e.report(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos"})
    void withinOneUlpNextToEveryMultipleOfHalfPi(String fn) {
        MaxError e = new MaxError(fn);
        for (int k = 1; k <= MAX_QUADRANT; k++) {
            float x = (float) (k * (Math.PI / 2));
            for (int d = -3; d <= 3; d++) {
                e.check(Float.intBitsToFloat(Float.floatToRawIntBits(x) + d));
                e.check(-Float.intBitsToFloat(Float.floatToRawIntBits(x) + d));
            }
        }
        e.report(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos"})
    void equalsTheDoubleFunctionBeyondTheReducedRangeAndOnSpecials(String fn) {
        MaxError e = new MaxError(fn);
        float[] specials = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MAX_VALUE,
            Math.nextUp(0x1p20f), 0x1p24f, 1e10f, 3.4e38f};
        for (float x : specials) {
            e.check(x);
            e.check(-x);
            assertThat(Float.floatToRawIntBits(e.actual(x))).as("%s(%s)", fn, x)
                    .isEqualTo(Float.floatToRawIntBits(e.expected(x)));
        }
        for (int bits = LIMIT_BITS + 1; bits < 0x7f800000; bits += 1009) {
            float x = Float.intBitsToFloat(bits);
            assertThat(e.actual(x)).as("%s(%s)", fn, x).isEqualTo(e.expected(x));
        }
        e.report(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sin", "cos"})
    void subnormalsAndSignedZeros(String fn) {
        MaxError e = new MaxError(fn);
        for (int bits = 0; bits < 0x00800000; bits += 101) {
            e.check(Float.intBitsToFloat(bits));
            e.check(Float.intBitsToFloat(bits | Integer.MIN_VALUE));
        }
        e.report(0);
        if (fn.equals("sin")) {
            assertThat(Float.floatToRawIntBits(FloatMath.sin(0f))).isZero();
            assertThat(Float.floatToRawIntBits(FloatMath.sin(-0f))).isEqualTo(Integer.MIN_VALUE);
            assertThat(FloatMath.sin(-Float.MIN_VALUE)).isEqualTo(-Float.MIN_VALUE);
        } else {
            assertThat(FloatMath.cos(-0f)).isEqualTo(1f);
            assertThat(FloatMath.cos(Float.MIN_VALUE)).isEqualTo(1f);
        }
    }

    @Test
    void expWithinOneUlpOnAStridedSweepThroughOverflowAndSubnormalResults() {
        MaxError e = new MaxError("exp");
        for (int bits = 0; bits <= EXP_SWEEP_BITS; bits += STRIDE) {
            e.check(Float.intBitsToFloat(bits));
            e.check(Float.intBitsToFloat(bits | Integer.MIN_VALUE));
        }
        e.report(1);
    }

    @Test
    void expOfSpecialsAndBeyondTheReducedRange() {
        assertThat(FloatMath.exp(Float.NaN)).isNaN();
        assertThat(FloatMath.exp(Float.POSITIVE_INFINITY)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(Float.floatToRawIntBits(FloatMath.exp(Float.NEGATIVE_INFINITY))).isZero();
        assertThat(FloatMath.exp(0f)).isEqualTo(1f);
        assertThat(FloatMath.exp(-0f)).isEqualTo(1f);
        assertThat(FloatMath.exp(Float.MIN_VALUE)).isEqualTo(1f);
        assertThat(FloatMath.exp(88.72283f)).isEqualTo((float) Math.exp(88.72283f)).isFinite();
        assertThat(FloatMath.exp(88.72284f)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(FloatMath.exp(-103.97208f)).isEqualTo(Float.MIN_VALUE);
        assertThat(Float.floatToRawIntBits(FloatMath.exp(-103.9721f))).isZero();
        for (int bits = Float.floatToRawIntBits(104f) + 1; bits < 0x7f800000; bits += 1009) {
            assertThat(FloatMath.exp(Float.intBitsToFloat(bits))).isEqualTo(Float.POSITIVE_INFINITY);
            assertThat(Float.floatToRawIntBits(FloatMath.exp(-Float.intBitsToFloat(bits)))).isZero();
        }
    }

    private interface FloatUnaryOperator {
        float apply(float x);
    }

    /** The largest distance in ulps seen between {@link FloatMath} and the rounded double function. */
    private static final class MaxError {
        private final String fn;
        private final DoubleUnaryOperator reference;
        private final FloatUnaryOperator function;
        private int max;
        private float worst;
        private long count;

        MaxError(String fn) {
            this.fn = fn;
            this.reference = switch (fn) {
                case "sin" -> Math::sin;
                case "cos" -> Math::cos;
                default -> Math::exp;
            };
            this.function = switch (fn) {
                case "sin" -> FloatMath::sin;
                case "cos" -> FloatMath::cos;
                default -> FloatMath::exp;
            };
        }

        float actual(float x) {
            return function.apply(x);
        }

        float expected(float x) {
            return (float) reference.applyAsDouble(x);
        }

        void check(float x) {
            count++;
            int d = ulps(actual(x), expected(x));
            if (d > max) {
                max = d;
                worst = x;
            }
        }

        void report(int bound) {
            System.out.printf("FloatMath.%s: %d arguments, max error %d ulp (at %s)%n", fn, count, max, worst);
            assertThat(max).as("max ulp error of %s, at %s", fn, worst).isLessThanOrEqualTo(bound);
        }

        /** Distance in representable floats; NaN is at distance 0 from NaN only, and ±0 apart by 1. */
        private static int ulps(float a, float b) {
            if (Float.isNaN(a) || Float.isNaN(b)) {
                return Float.isNaN(a) && Float.isNaN(b) ? 0 : Integer.MAX_VALUE;
            }
            return (int) Math.min(Integer.MAX_VALUE, Math.abs(ordered(a) - ordered(b)));
        }

        /** Float bits mapped to a line on which consecutive floats are consecutive integers, -0 just below +0. */
        private static long ordered(float f) {
            int bits = Float.floatToRawIntBits(f);
            return bits >= 0 ? (long) bits + 1 : -(long) (bits & Integer.MAX_VALUE);
        }
    }
}
