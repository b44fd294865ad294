package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import java.math.BigDecimal;
import java.math.MathContext;

/**
 * Floating-point functions written out in PTX for F32 and F64 (no libdevice, no {@code .approx} instructions).
 * Each takes operand registers and returns a fresh result register; all are branch-free except integer power.
 *
 * <p>Accuracy (by construction of the reductions and polynomial degrees; not yet measured on a device): {@code exp}
 * and {@code log} within about 2 ulp; {@code sin}/{@code cos} within about 2 ulp while {@code |x| < 2^20} (a
 * three-constant Cody–Waite reduction by π/2; beyond that the error grows with |x|); {@code tanh} within about 2
 * ulp (Cephes' polynomial or rational form below 0.625, {@code 1 - 2/(e^{2|x|}+1)} above). {@code pow} is
 * {@code exp(y·log|x|)} with Java's special cases, so its relative error grows as {@code |y·log x|·ε}: up to a few
 * hundred ulp for F64 results near the overflow limit. Floating {@code rem} is {@code a - trunc(a/b)·b} with one
 * correction step: exact while {@code |a/b| < 2^24} (F32) or {@code 2^53} (F64). {@code atan2} within about 3 ulp
 * (F32) and 2 ulp (F64) (Cephes' {@code atan} forms; the bounds from a simulation of these steps in each dtype).
 */
final class PtxMath {
    private PtxMath() {
    }

    private static final MathContext MC = new MathContext(60);
    private static final BigDecimal LN2 = new BigDecimal("0.693147180559945309417232121458176568075500134360255");
    private static final BigDecimal PI_2 = new BigDecimal("1.570796326794896619231321691639751442098584699687553");

    /** {@code v} split into {@code parts} values of {@code t} whose exact sum approximates it best. */
    private static double[] split(BigDecimal v, DType t, int parts) {
        double[] out = new double[parts];
        BigDecimal rest = v;
        for (int i = 0; i < parts; i++) {
            out[i] = t == DType.F32 ? (float) rest.doubleValue() : rest.doubleValue();
            rest = rest.subtract(new BigDecimal(out[i]), MC);
        }
        return out;
    }

    static String op(PtxWriter w, DType t, String instruction, String... args) {
        String r = w.reg(t);
        w.ins(instruction + "." + Reg.arith(t) + " " + r + ", " + String.join(", ", args));
        return r;
    }

    static String fma(PtxWriter w, DType t, String a, String b, String c) {
        return op(w, t, "fma.rn", a, b, c);
    }

    /** {@code c[0]·z^(n-1) + ... + c[n-1]} by Horner's rule. */
    private static String horner(PtxWriter w, DType t, String z, double... c) {
        String p = op(w, t, "mov", Imm.of(t, c[0]));
        for (int i = 1; i < c.length; i++) {
            p = fma(w, t, p, z, Imm.of(t, c[i]));
        }
        return p;
    }

    private static String selp(PtxWriter w, DType t, String ifTrue, String ifFalse, String pred) {
        return op(w, t, "selp", ifTrue, ifFalse, pred);
    }

    private static String setp(PtxWriter w, DType t, String cmp, String a, String b) {
        String p = w.reg(Reg.PRED);
        w.ins("setp." + cmp + "." + Reg.arith(t) + " " + p + ", " + a + ", " + b);
        return p;
    }

    private static double factorial(int n) {
        double f = 1;
        for (int i = 2; i <= n; i++) {
            f *= i;
        }
        return f;
    }

    /** {@code e^x}: {@code x = k·ln2 + r}, a Taylor polynomial on {@code |r| <= ln2/2}, then two exact scalings. */
    static String exp(PtxWriter w, DType t, String x) {
        boolean f32 = t == DType.F32;
        String xc = op(w, t, "min", x, Imm.of(t, f32 ? 89 : 710));
        xc = op(w, t, "max", xc, Imm.of(t, f32 ? -104 : -746));
        String kf = w.reg(t);
        w.ins("cvt.rni." + Reg.arith(t) + "." + Reg.arith(t) + " " + kf + ", "
                + op(w, t, "mul.rn", xc, Imm.of(t, 1 / Math.log(2))));
        double[] ln2 = split(LN2, t, 2);
        String r = fma(w, t, kf, Imm.of(t, -ln2[0]), xc);
        r = fma(w, t, kf, Imm.of(t, -ln2[1]), r);
        int degree = f32 ? 8 : 13;
        double[] c = new double[degree + 1];
        for (int i = 0; i <= degree; i++) {
            c[i] = 1 / factorial(degree - i);
        }
        String p = horner(w, t, r, c);
        String k = w.reg(Reg.S32);
        w.ins("cvt.rzi.s32." + Reg.arith(t) + " " + k + ", " + kf);
        String k1 = w.reg(Reg.S32), k2 = w.reg(Reg.S32);
        w.ins("shr.s32 " + k1 + ", " + k + ", 1");
        w.ins("sub.s32 " + k2 + ", " + k + ", " + k1);
        for (String half : new String[] {k1, k2}) {
            p = op(w, t, "mul.rn", p, powerOfTwo(w, t, half));
        }
        return selp(w, t, x, p, setp(w, t, "nan", x, x));
    }

    /** {@code 2^k} for a 32-bit register {@code k} within the normal exponent range of {@code t}. */
    private static String powerOfTwo(PtxWriter w, DType t, String k) {
        String s = w.reg(t);
        if (t == DType.F32) {
            String bits = w.reg(Reg.S32);
            w.ins("add.s32 " + bits + ", " + k + ", 127");
            w.ins("shl.b32 " + bits + ", " + bits + ", 23");
            w.ins("mov.b32 " + s + ", " + bits);
        } else {
            String bits = w.reg(Reg.S64);
            w.ins("cvt.s64.s32 " + bits + ", " + k);
            w.ins("add.s64 " + bits + ", " + bits + ", 1023");
            w.ins("shl.b64 " + bits + ", " + bits + ", 52");
            w.ins("mov.b64 " + s + ", " + bits);
        }
        return s;
    }

    /**
     * {@code ln x}: {@code x = m·2^e} with {@code m} in [√½, √2), {@code ln m = 2·atanh(s)}, {@code s = (m-1)/(m+1)},
     * by its odd series; subnormal inputs are scaled first.
     */
    static String log(PtxWriter w, DType t, String x) {
        boolean f32 = t == DType.F32;
        Reg bitsReg = f32 ? Reg.S32 : Reg.S64;
        String b = f32 ? "b32" : "b64", u = f32 ? "u32" : "u64";
        int mantissa = f32 ? 23 : 52, bias = f32 ? 127 : 1023, scaleExp = f32 ? 24 : 54;
        String tiny = setp(w, t, "lt", x, Imm.of(t, Math.scalb(1.0, f32 ? -126 : -1022)));
        String xs = selp(w, t, op(w, t, "mul.rn", x, Imm.of(t, Math.scalb(1.0, scaleExp))), x, tiny);
        String bits = w.reg(bitsReg);
        w.ins("mov." + b + " " + bits + ", " + xs);
        String ebits = w.reg(bitsReg);
        w.ins("shr." + u + " " + ebits + ", " + bits + ", " + mantissa);
        w.ins("and." + b + " " + ebits + ", " + ebits + ", " + (f32 ? 0xff : 0x7ff));
        String e = w.reg(Reg.S32);
        w.ins(f32 ? "mov.b32 " + e + ", " + ebits : "cvt.u32.u64 " + e + ", " + ebits);
        String eAdjust = w.reg(Reg.S32);
        w.ins("selp.s32 " + eAdjust + ", " + (-bias - scaleExp) + ", " + (-bias) + ", " + tiny);
        w.ins("add.s32 " + e + ", " + e + ", " + eAdjust);
        String mbits = w.reg(bitsReg);
        w.ins("and." + b + " " + mbits + ", " + bits + ", " + ((1L << mantissa) - 1));
        w.ins("or." + b + " " + mbits + ", " + mbits + ", " + ((long) bias << mantissa));
        String m = w.reg(t);
        w.ins("mov." + b + " " + m + ", " + mbits);
        String big = setp(w, t, "gt", m, Imm.of(t, Math.sqrt(2)));
        m = selp(w, t, op(w, t, "mul.rn", m, Imm.of(t, 0.5)), m, big);
        String bump = w.reg(Reg.S32);
        w.ins("selp.s32 " + bump + ", 1, 0, " + big);
        w.ins("add.s32 " + e + ", " + e + ", " + bump);
        String s = op(w, t, "div.rn", op(w, t, "sub.rn", m, Imm.of(t, 1)), op(w, t, "add.rn", m, Imm.of(t, 1)));
        String z = op(w, t, "mul.rn", s, s);
        int terms = f32 ? 6 : 11;
        double[] c = new double[terms];
        for (int i = 0; i < terms; i++) {
            c[i] = 2.0 / (2 * (terms - i) + 1);
        }
        String q = horner(w, t, z, c);
        String logm = fma(w, t, op(w, t, "mul.rn", s, z), q, op(w, t, "add.rn", s, s));
        String ef = w.reg(t);
        w.ins("cvt.rn." + Reg.arith(t) + ".s32 " + ef + ", " + e);
        double[] ln2 = split(LN2, t, 2);
        String r = fma(w, t, ef, Imm.of(t, ln2[0]), fma(w, t, ef, Imm.of(t, ln2[1]), logm));
        r = selp(w, t, Imm.of(t, Double.POSITIVE_INFINITY), r, setp(w, t, "eq", x, Imm.of(t,
                Double.POSITIVE_INFINITY)));
        r = selp(w, t, Imm.of(t, Double.NEGATIVE_INFINITY), r, setp(w, t, "eq", x, Imm.of(t, 0)));
        return selp(w, t, Imm.of(t, Double.NaN), r, setp(w, t, "ltu", x, Imm.of(t, 0)));
    }

    static String sin(PtxWriter w, DType t, String x) {
        return sinCos(w, t, x, 0);
    }

    static String cos(PtxWriter w, DType t, String x) {
        return sinCos(w, t, x, 1);
    }

    /**
     * {@code sin(x + shift·π/2)}: {@code x = k·π/2 + r} (three-part Cody–Waite), then the sine or cosine
     * polynomial of {@code r} and its sign by the quadrant {@code (k + shift) mod 4}.
     */
    private static String sinCos(PtxWriter w, DType t, String x, int shift) {
        boolean f32 = t == DType.F32;
        String kf = w.reg(t);
        w.ins("cvt.rni." + Reg.arith(t) + "." + Reg.arith(t) + " " + kf + ", "
                + op(w, t, "mul.rn", x, Imm.of(t, 2 / Math.PI)));
        String r = x;
        for (double part : split(PI_2, t, 3)) {
            r = fma(w, t, kf, Imm.of(t, -part), r);
        }
        String k = w.reg(Reg.S64), q = w.reg(Reg.S32);
        w.ins("cvt.rzi.s64." + Reg.arith(t) + " " + k + ", " + kf);
        w.ins("cvt.u32.u64 " + q + ", " + k);
        w.ins("add.s32 " + q + ", " + q + ", " + shift);
        String z = op(w, t, "mul.rn", r, r);
        int sinTerms = f32 ? 5 : 8, cosTerms = f32 ? 5 : 8;
        double[] sc = new double[sinTerms];
        for (int i = 0; i < sinTerms; i++) {
            int power = 2 * (sinTerms - i) + 1;
            sc[i] = (power % 4 == 1 ? 1 : -1) / factorial(power);
        }
        String sinR = fma(w, t, op(w, t, "mul.rn", r, z), horner(w, t, z, sc), r);
        double[] cc = new double[cosTerms];
        for (int i = 0; i < cosTerms; i++) {
            int power = 2 * (cosTerms - i) + 2;
            cc[i] = (power % 4 == 0 ? 1 : -1) / factorial(power);
        }
        String cosR = fma(w, t, op(w, t, "mul.rn", z, z), horner(w, t, z, cc), fma(w, t, z, Imm.of(t, -0.5),
                Imm.of(t, 1)));
        String bit = w.reg(Reg.S32);
        String odd = w.reg(Reg.PRED), negative = w.reg(Reg.PRED);
        w.ins("and.b32 " + bit + ", " + q + ", 1");
        w.ins("setp.ne.s32 " + odd + ", " + bit + ", 0");
        String bit2 = w.reg(Reg.S32);
        w.ins("and.b32 " + bit2 + ", " + q + ", 2");
        w.ins("setp.ne.s32 " + negative + ", " + bit2 + ", 0");
        String v = selp(w, t, cosR, sinR, odd);
        v = selp(w, t, op(w, t, "neg", v), v, negative);
        String inf = w.reg(Reg.PRED);
        w.ins("testp.infinite." + Reg.arith(t) + " " + inf + ", " + x);
        return selp(w, t, Imm.of(t, Double.NaN), v, inf);
    }

    /** {@code tanh x}: Cephes' small-argument forms below 0.625, {@code 1 - 2/(e^{2|x|}+1)} with x's sign above. */
    static String tanh(PtxWriter w, DType t, String x) {
        String ax = op(w, t, "abs", x);
        String e = exp(w, t, op(w, t, "add.rn", ax, ax));
        String large = op(w, t, "sub.rn", Imm.of(t, 1), op(w, t, "div.rn", Imm.of(t, 2),
                op(w, t, "add.rn", e, Imm.of(t, 1))));
        large = op(w, t, "copysign", x, large);
        String z = op(w, t, "mul.rn", x, x);
        String ratio = t == DType.F32
                ? horner(w, t, z, -5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1,
                        -3.33332819422E-1)
                : op(w, t, "div.rn",
                        horner(w, t, z, -9.64399179425052238628E-1, -9.92877231001918586564E1,
                                -1.61468768441708447952E3),
                        horner(w, t, z, 1, 1.12811678491632931402E2, 2.23548839060100448583E3,
                                4.84406305325125486048E3));
        String small = fma(w, t, op(w, t, "mul.rn", x, z), ratio, x);
        return selp(w, t, small, large, setp(w, t, "lt", ax, Imm.of(t, 0.625)));
    }

    /** {@code x^y} for floats with Java's {@link Math#pow} special cases; see the class comment for accuracy. */
    static String pow(PtxWriter w, DType t, String x, String y) {
        String magnitude = exp(w, t, op(w, t, "mul.rn", y, log(w, t, op(w, t, "abs", x))));
        String yt = w.reg(t);
        w.ins("cvt.rzi." + Reg.arith(t) + "." + Reg.arith(t) + " " + yt + ", " + y);
        String integral = setp(w, t, "eq", yt, y);
        String half = op(w, t, "mul.rn", y, Imm.of(t, 0.5));
        String ht = w.reg(t);
        w.ins("cvt.rzi." + Reg.arith(t) + "." + Reg.arith(t) + " " + ht + ", " + half);
        String odd = setp(w, t, "ne", ht, half);
        w.ins("and.pred " + odd + ", " + odd + ", " + integral);
        String bits = w.reg(t == DType.F32 ? Reg.S32 : Reg.S64);
        w.ins("mov.b" + (t == DType.F32 ? 32 : 64) + " " + bits + ", " + x);
        String signBit = w.reg(Reg.PRED);
        w.ins("setp.lt.s" + (t == DType.F32 ? 32 : 64) + " " + signBit + ", " + bits + ", 0");
        w.ins("and.pred " + odd + ", " + odd + ", " + signBit);
        String r = selp(w, t, op(w, t, "neg", magnitude), magnitude, odd);
        String negative = setp(w, t, "lt", x, Imm.of(t, 0));
        String notIntegral = w.reg(Reg.PRED);
        w.ins("not.pred " + notIntegral + ", " + integral);
        w.ins("and.pred " + negative + ", " + negative + ", " + notIntegral);
        r = selp(w, t, Imm.of(t, Double.NaN), r, negative);
        return selp(w, t, Imm.of(t, 1), r, setp(w, t, "eq", y, Imm.of(t, 0)));
    }

    /**
     * {@code atan2(y, x)} with Java's {@link Math#atan2} special cases (signed zeros, infinities, NaN): {@code atan}
     * of {@code a = min/max} of the magnitudes, in [0, 1], by Cephes' forms (F32: a polynomial, reduced by π/4 above
     * tan(π/8); F64: a rational function, reduced above 0.66), then {@code base ± atan a} with base 0, π/2 or π by
     * which magnitude is larger and the sign of {@code x}, and the sign of {@code y}.
     */
    static String atan2(PtxWriter w, DType t, String y, String x) {
        boolean f32 = t == DType.F32;
        String ax = op(w, t, "abs", x), ay = op(w, t, "abs", y);
        String max = op(w, t, "max", ax, ay);
        String a = op(w, t, "div.rn", op(w, t, "min", ax, ay), max);
        a = selp(w, t, Imm.of(t, 0), a, setp(w, t, "eq", max, Imm.of(t, 0)));
        String infinite = w.reg(Reg.PRED), yInfinite = w.reg(Reg.PRED);
        w.ins("testp.infinite." + Reg.arith(t) + " " + infinite + ", " + x);
        w.ins("testp.infinite." + Reg.arith(t) + " " + yInfinite + ", " + y);
        w.ins("and.pred " + infinite + ", " + infinite + ", " + yInfinite);
        a = selp(w, t, Imm.of(t, 1), a, infinite);
        String reduced = setp(w, t, "gt", a, Imm.of(t, f32 ? Math.tan(Math.PI / 8) : 0.66));
        String z0 = selp(w, t, op(w, t, "div.rn", op(w, t, "sub.rn", a, Imm.of(t, 1)),
                op(w, t, "add.rn", a, Imm.of(t, 1))), a, reduced);
        String z = op(w, t, "mul.rn", z0, z0);
        String p = f32
                ? op(w, t, "mul.rn", horner(w, t, z, 8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1,
                        -3.33329491539e-1), z)
                : op(w, t, "div.rn", op(w, t, "mul.rn", z, horner(w, t, z, -8.750608600031904122785e-1,
                        -1.615753718733365076637e1, -7.500855792314704667340e1, -1.228866684490136173410e2,
                        -6.485021904942025371773e1)), horner(w, t, z, 1, 2.485846490142306297962e1,
                        1.650270098316988542046e2, 4.328810604912902668951e2, 4.853903996359136964868e2,
                        1.945506571482613964425e2));
        String r = fma(w, t, z0, p, z0);
        double[] halfPi = split(PI_2, t, 2);
        r = selp(w, t, op(w, t, "add.rn", op(w, t, "add.rn", r, Imm.of(t, halfPi[1] / 2)), Imm.of(t, halfPi[0] / 2)),
                r, reduced);
        String swapped = setp(w, t, "gt", ay, ax);
        String xBits = w.reg(f32 ? Reg.S32 : Reg.S64);
        w.ins("mov.b" + (f32 ? 32 : 64) + " " + xBits + ", " + x);
        String xNegative = w.reg(Reg.PRED);
        w.ins("setp.lt.s" + (f32 ? 32 : 64) + " " + xNegative + ", " + xBits + ", 0");
        String subtract = w.reg(Reg.PRED);
        w.ins("xor.pred " + subtract + ", " + swapped + ", " + xNegative);
        String quarters = selp(w, t, Imm.of(t, 1), selp(w, t, Imm.of(t, 2), Imm.of(t, 0), xNegative), swapped);
        String angle = fma(w, t, quarters, Imm.of(t, halfPi[0]), selp(w, t, op(w, t, "neg", r), r, subtract));
        angle = op(w, t, "copysign", y, fma(w, t, quarters, Imm.of(t, halfPi[1]), angle));
        return selp(w, t, op(w, t, "add.rn", x, y), angle, setp(w, t, "nan", x, y));
    }

    /**
     * Integer {@code x^y} by squaring, wrapping on overflow; a negative exponent gives 0 unless {@code x} is 1 or
     * -1 (as the CPU kernels).
     */
    static String intPow(PtxWriter w, DType t, String x, String y) {
        String s = Reg.arith(t), bits = t == DType.I32 ? "b32" : "b64";
        String r = op(w, t, "mov", "1"), base = op(w, t, "mov", x), e = op(w, t, "mov", y);
        String loop = w.label(), negative = w.label(), end = w.label();
        String p = w.reg(Reg.PRED), bit = w.reg(t);
        w.ins("setp.lt." + s + " " + p + ", " + e + ", 0").ins("@" + p + " bra " + negative);
        w.at(loop);
        w.ins("setp.eq." + s + " " + p + ", " + e + ", 0").ins("@" + p + " bra " + end);
        w.ins("and." + bits + " " + bit + ", " + e + ", 1");
        w.ins("setp.ne." + s + " " + p + ", " + bit + ", 0");
        w.ins("@" + p + " mul.lo." + s + " " + r + ", " + r + ", " + base);
        w.ins("mul.lo." + s + " " + base + ", " + base + ", " + base);
        w.ins("shr." + s + " " + e + ", " + e + ", 1");
        w.ins("bra " + loop);
        w.at(negative);
        w.ins("mov." + s + " " + r + ", 0");
        w.ins("setp.eq." + s + " " + p + ", " + x + ", 1").ins("@" + p + " mov." + s + " " + r + ", 1");
        w.ins("and." + bits + " " + bit + ", " + e + ", 1");
        w.ins("setp.ne." + s + " " + p + ", " + bit + ", 0");
        w.ins("selp." + s + " " + bit + ", -1, 1, " + p);
        w.ins("setp.eq." + s + " " + p + ", " + x + ", -1").ins("@" + p + " mov." + s + " " + r + ", " + bit);
        w.at(end);
        return r;
    }
}
