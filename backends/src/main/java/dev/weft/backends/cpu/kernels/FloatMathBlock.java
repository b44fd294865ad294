package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.FloatMath.EXP_LIMIT;
import static dev.weft.backends.cpu.kernels.FloatMath.LOG2_E;
import static dev.weft.backends.cpu.kernels.FloatMath.REDUCE_LIMIT;
import static dev.weft.backends.cpu.kernels.FloatMath.ROUND_SHIFTER;
import static dev.weft.backends.cpu.kernels.FloatMath.TWO_OVER_PI;

import java.lang.foreign.MemorySegment;

/**
 * {@link FloatMath}'s sine, cosine and exponential over a block of floats, equal bit for bit to the scalar
 * functions for every input, in loops that HotSpot's C2 compiles to SIMD code. Each lane performs the scalar
 * function's IEEE double operations in the same order; what the scalar code does by branching or by
 * reinterpreting bits, which C2 does not vectorize, is done here with exact arithmetic:
 * <ul>
 * <li>the quadrant's polynomial is {@code sin·(1 - odd) + cos·odd} with {@code odd} 0 or 1, exact because the
 * other term is a signed zero added to a nonzero value, or {@code +0 + +0} at {@code x = ±0};
 * <li>each sign flip is a product with ±1, and the sign of {@code x} a product with {@link Math#signum}, whose
 * ±0 meets a {@code +0} only, so that {@code sin(±0) = ±0};
 * <li>the bits of exp's {@code 2^k} are stored as longs and reinterpreted as doubles by a bulk copy.
 * </ul>
 * The quadrant is converted to an {@code int}, not a {@code long}: C2 vectorizes double-to-long conversion only
 * with AVX-512, double-to-int with AVX2 as well (both checked on x86). Where C2 does not vectorize these loops
 * they take about twice the scalar functions' time, since every lane evaluates both polynomials.
 * A block holding an argument outside the reduced range, or NaN, is computed by the scalar functions element by
 * element. Blocks hold at most {@link #SIZE} elements; each thread has one instance ({@link #local()}), which holds
 * the exponential's scratch.
 */
public final class FloatMathBlock {
    /** Elements per block at most: a block, its operands and the scratch stay in the L1 cache. */
    public static final int SIZE = 512;

    private static final ThreadLocal<FloatMathBlock> LOCAL = ThreadLocal.withInitial(FloatMathBlock::new);

    /** {@code e^r} of each element. */
    private final double[] polynomial;
    /** The bits of each element's {@code 2^k}, then ({@link #scaleView}) that double. */
    private final long[] scaleBits;
    private final double[] scale;
    private final MemorySegment scaleBitsView;
    private final MemorySegment scaleView;

    private FloatMathBlock() {
        polynomial = new double[SIZE];
        scaleBits = new long[SIZE];
        scale = new double[SIZE];
        scaleBitsView = MemorySegment.ofArray(scaleBits);
        scaleView = MemorySegment.ofArray(scale);
    }

    /** This thread's instance. */
    public static FloatMathBlock local() {
        return LOCAL.get();
    }

    /** {@code y[i] = FloatMath.sin(x[i])} for {@code i < n ≤ SIZE}; {@code y} may be {@code x}. */
    public void sin(float[] x, float[] y, int n) {
        if (!allWithin(x, n, (float) REDUCE_LIMIT)) {
            for (int i = 0; i < n; i++) {
                y[i] = FloatMath.sin(x[i]);
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            double d = x[i];
            double ax = Math.abs(d);
            double k = (ax * TWO_OVER_PI + ROUND_SHIFTER) - ROUND_SHIFTER;
            int q = (int) k;
            double r = FloatMath.reduceHalfPi(ax, k);
            y[i] = (float) (select(r, q) * (quadrantSign(q) * Math.signum(d)));
        }
    }

    /** {@code y[i] = FloatMath.cos(x[i])} for {@code i < n ≤ SIZE}; {@code y} may be {@code x}. */
    public void cos(float[] x, float[] y, int n) {
        if (!allWithin(x, n, (float) REDUCE_LIMIT)) {
            for (int i = 0; i < n; i++) {
                y[i] = FloatMath.cos(x[i]);
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            double ax = Math.abs((double) x[i]);
            double k = (ax * TWO_OVER_PI + ROUND_SHIFTER) - ROUND_SHIFTER;
            int q = (int) k + 1;
            double r = FloatMath.reduceHalfPi(ax, k);
            y[i] = (float) (select(r, q) * quadrantSign(q));
        }
    }

    /** {@code y[i] = FloatMath.exp(x[i])} for {@code i < n ≤ SIZE}; {@code y} may be {@code x}. */
    public void exp(float[] x, float[] y, int n) {
        if (!allWithin(x, n, (float) EXP_LIMIT)) {
            for (int i = 0; i < n; i++) {
                y[i] = FloatMath.exp(x[i]);
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            double d = x[i];
            double k = (d * LOG2_E + ROUND_SHIFTER) - ROUND_SHIFTER;
            polynomial[i] = FloatMath.expPolynomial(FloatMath.reduceLn2(d, k));
            scaleBits[i] = FloatMath.scaleBits((int) k);
        }
        MemorySegment.copy(scaleBitsView, 0, scaleView, 0, (long) n * Double.BYTES);
        for (int i = 0; i < n; i++) {
            y[i] = (float) (polynomial[i] * scale[i]);
        }
    }

    /**
     * Whether no {@code |x[i]|}, {@code i < n}, exceeds the integer {@code limit} and none is NaN, in one pass
     * without branches: {@code (int) (limit + 1 - |x|)} is at least 1 exactly then (the subtraction is exact
     * where its result is near 1), and 0 or negative otherwise, NaN included.
     */
    private static boolean allWithin(float[] x, int n, float limit) {
        float bound = limit + 1;
        int flags = 0;
        for (int i = 0; i < n; i++) {
            int v = (int) (bound - Math.abs(x[i]));
            flags |= v | (v - 1);
        }
        return flags >= 0;
    }

    /** {@code sin r} for even {@code q}, {@code cos r} for odd, as {@code FloatMath} selects it. */
    private static double select(double r, int q) {
        double odd = q & 1;
        return FloatMath.sinPolynomial(r) * (1 - odd) + FloatMath.cosPolynomial(r) * odd;
    }

    /** -1 where bit 1 of {@code q} is set (the second half of a turn), else 1. */
    private static double quadrantSign(int q) {
        return 1 - (q & 2);
    }
}
