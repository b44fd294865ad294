package dev.weft.backends.cpu.kernels;

/**
 * Single-precision sine, cosine and exponential, shared by the eager f32 kernels and the generated fused loops
 * so that both compute every element bit for bit alike. Each result is within 1 ulp of
 * {@code (float) Math.sin((double) x)} (resp. {@code cos}, {@code exp}) for every float: the argument is reduced
 * in double and a polynomial evaluated in double, then rounded once. Arguments outside the reduced range,
 * infinities and NaN take the {@link Math} function.
 *
 * <p>Reduction: {@code |x| = k·π/2 + r}, {@code |r| ≤ π/4}, with π/2 split into two doubles and each product
 * subtracted by one fused multiply-add, so {@code r} carries about 2^-85 absolute error for {@code k < 2^20} —
 * far below the closest approach of a float in range to a multiple of π/2. The kernels on {@code [-π/4, π/4]}
 * are the minimax polynomials of FreeBSD msun {@code k_sinf.c} (relative error below 2^-37.5) and
 * {@code k_cosf.c} (absolute error below 2^-34.1) (Sun Microsystems, freely redistributable). Both kernels are
 * evaluated and the quadrant selects one and its sign without branching on data.
 *
 * <p>Exponential: {@code x = k·ln 2 + r}, {@code |r| ≤ ln 2 / 2}, reduced the same way; {@code e^r} is its
 * Taylor polynomial of degree 9 (truncation below 2^-37 relative), scaled by {@code 2^k} exactly in double, so
 * f32 overflow, subnormal results and underflow come from the single final rounding.
 *
 * <p>{@link FloatMathBlock} evaluates the same functions over blocks; the package-private pieces here are shared
 * with it so that both perform the same operations.
 */
public final class FloatMath {
    /** Largest magnitude reduced here; beyond it {@code k·π/2} needs more than two parts of π/2. */
    static final double REDUCE_LIMIT = 0x1p20;
    static final double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
    private static final double PI_OVER_2_HI = 0x1.921fb54442d18p0;
    private static final double PI_OVER_2_LO = 0x1.1a62633145c07p-54;
    /** Adding 1.5·2^52 rounds a double of magnitude below 2^51 to an integer, held in the low mantissa bits. */
    static final double ROUND_SHIFTER = 0x1.8p52;

    /** Beyond it f32 {@code e^x} is infinite or zero; within it {@code 2^k} is a normal double. */
    static final double EXP_LIMIT = 104;
    static final double LOG2_E = 0x1.71547652b82fep0;
    private static final double LN2_HI = 0x1.62e42fefa39efp-1;
    private static final double LN2_LO = 0x1.abc9e3b39803fp-56;

    private static final double S1 = -0x15555554cbac77.0p-55;
    private static final double S2 = 0x111110896efbb2.0p-59;
    private static final double S3 = -0x1a00f9e2cae774.0p-65;
    private static final double S4 = 0x16cd878c3b46a7.0p-71;
    private static final double C0 = -0x1ffffffd0c5e81.0p-54;
    private static final double C1 = 0x155553e1053a42.0p-57;
    private static final double C2 = -0x16c087e80f1e27.0p-62;
    private static final double C3 = 0x199342e0ee5069.0p-68;

    private FloatMath() {
    }

    /** Sine of {@code x} in radians; {@code sin(±0) = ±0}, NaN for NaN and infinities. */
    public static float sin(float x) {
        double ax = Math.abs((double) x);
        if (!(ax <= REDUCE_LIMIT)) {
            return (float) Math.sin(x);
        }
        // sin(x) = sign(x)·sin(|x|); quadrant q of |x| picks sin r, cos r, -sin r, -cos r.
        long q = quadrant(ax);
        double r = reduce(ax, q);
        long negate = (q << 62) ^ ((long) Float.floatToRawIntBits(x) << 32);
        return (float) withSign(select(r, q), negate);
    }

    /** Cosine of {@code x} in radians; NaN for NaN and infinities. */
    public static float cos(float x) {
        double ax = Math.abs((double) x);
        if (!(ax <= REDUCE_LIMIT)) {
            return (float) Math.cos(x);
        }
        // cos(x) = cos(|x|) = sin(|x| + π/2): quadrant q + 1 of the sine.
        long q = quadrant(ax);
        double r = reduce(ax, q);
        return (float) withSign(select(r, q + 1), (q + 1) << 62);
    }

    /** {@code e^x}; {@code +Inf} above about 88.72, {@code 0} below about -103.97, NaN for NaN. */
    public static float exp(float x) {
        double d = x;
        if (!(Math.abs(d) <= EXP_LIMIT)) {
            return (float) Math.exp(d);
        }
        double k = (d * LOG2_E + ROUND_SHIFTER) - ROUND_SHIFTER;
        return (float) (expPolynomial(reduceLn2(d, k)) * Double.longBitsToDouble(scaleBits((int) k)));
    }

    /** {@code k = round(ax·2/π)} in the low bits of the result (ax ≥ 0). */
    private static long quadrant(double ax) {
        return Double.doubleToRawLongBits(ax * TWO_OVER_PI + ROUND_SHIFTER);
    }

    /** {@code ax - k·π/2} for the {@code k} in the low bits of {@code q}. */
    private static double reduce(double ax, long q) {
        return reduceHalfPi(ax, Double.longBitsToDouble(q) - ROUND_SHIFTER);
    }

    /** {@code sin r} for even {@code q}, {@code cos r} for odd. */
    private static double select(double r, long q) {
        double sin = sinPolynomial(r);
        double cos = cosPolynomial(r);
        return (q & 1) == 0 ? sin : cos;
    }

    /** {@code v} with its sign flipped when bit 63 of {@code negate} is set. */
    private static double withSign(double v, long negate) {
        return Double.longBitsToDouble(Double.doubleToRawLongBits(v) ^ (negate & Long.MIN_VALUE));
    }

    /** {@code ax - k·π/2} for integral {@code k}. */
    static double reduceHalfPi(double ax, double k) {
        return Math.fma(-k, PI_OVER_2_LO, Math.fma(-k, PI_OVER_2_HI, ax));
    }

    /** {@code sin r} for {@code |r| ≤ π/4}. */
    static double sinPolynomial(double r) {
        double z = r * r;
        double w = z * z;
        double s = z * r;
        return (r + s * (S1 + z * S2)) + s * w * (S3 + z * S4);
    }

    /** {@code cos r} for {@code |r| ≤ π/4}. */
    static double cosPolynomial(double r) {
        double z = r * r;
        double w = z * z;
        return ((1.0 + z * C0) + w * C1) + (w * z) * (C2 + z * C3);
    }

    /** {@code d - k·ln 2} for integral {@code k}. */
    static double reduceLn2(double d, double k) {
        return Math.fma(-k, LN2_LO, Math.fma(-k, LN2_HI, d));
    }

    /** {@code e^r} for {@code |r| ≤ ln 2 / 2}. */
    static double expPolynomial(double r) {
        return 1 + r * (1 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720
                + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880)))))))));
    }

    /** The bits of the double {@code 2^k}, for {@code k} in the normal exponent range. */
    static long scaleBits(int k) {
        return ((long) k + Double.MAX_EXPONENT) << 52;
    }
}
