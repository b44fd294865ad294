package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.Op;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Locale;

/**
 * PTX for one element of an elementwise op, with the CPU kernels' semantics: floating arithmetic is IEEE
 * round-to-nearest with no contraction into FMA ({@code .rn}); floating max/min propagate NaN; NE is unordered (true
 * on NaN), the other comparisons ordered; conversions follow Java casts (float to integer truncates and saturates,
 * NaN to 0; i64 to i32 keeps the low bits; to BOOL is {@code != 0}). Differences from the CPU: an integer division
 * or remainder by zero does not fail (PTX leaves the result unspecified) and the functions in {@link PtxMath} are
 * within a few ulp rather than Java's {@link StrictMath}-level results.
 */
final class ScalarOps {
    private ScalarOps() {
    }

    /** Emits elementwise op {@code op} on operand registers {@code in} and returns the result register. */
    static String emit(PtxWriter w, Op op, List<String> in) {
        return emit(w, op.elementwise(), op.operand(0).tensorType().dtype(), op.result().tensorType().dtype(), in);
    }

    /**
     * Emits {@code op} on registers {@code in} holding elements of {@code t} (for select, the condition) with a
     * result of {@code out}, and returns the result register; reductions combine with it too.
     */
    static String emit(PtxWriter w, ElementwiseOp op, DType t, DType out, List<String> in) {
        if (op.form() != ElementwiseOp.Form.SELECT && !op.accepts(t)) {
            throw new IllegalArgumentException(op + " is not defined on " + t);
        }
        boolean f = t.isFloating();
        String a = in.get(0), b = in.size() > 1 ? in.get(1) : null;
        return switch (op) {
            case ADD -> PtxMath.op(w, t, f ? "add.rn" : "add", a, b);
            case SUB -> PtxMath.op(w, t, f ? "sub.rn" : "sub", a, b);
            case MUL -> PtxMath.op(w, t, f ? "mul.rn" : "mul.lo", a, b);
            case DIV -> PtxMath.op(w, t, f ? "div.rn" : "div", a, b);
            case REM -> f ? floatRem(w, t, a, b) : PtxMath.op(w, t, "rem", a, b);
            case POW -> f ? PtxMath.pow(w, t, a, b) : PtxMath.intPow(w, t, a, b);
            case ATAN2 -> PtxMath.atan2(w, t, a, b);
            case MAX -> maxMin(w, t, "max", a, b);
            case MIN -> maxMin(w, t, "min", a, b);
            case NEG -> PtxMath.op(w, t, "neg", a);
            case ABS -> PtxMath.op(w, t, "abs", a);
            case EXP -> PtxMath.exp(w, t, a);
            case LOG -> PtxMath.log(w, t, a);
            case SQRT -> PtxMath.op(w, t, "sqrt.rn", a);
            case RSQRT -> PtxMath.op(w, t, "div.rn", Imm.of(t, 1), PtxMath.op(w, t, "sqrt.rn", a));
            case TANH -> PtxMath.tanh(w, t, a);
            case SIN -> PtxMath.sin(w, t, a);
            case COS -> PtxMath.cos(w, t, a);
            case LT, LE, GT, GE, EQ -> compare(w, t, op.direction().toLowerCase(Locale.ROOT), a, b);
            case NE -> compare(w, t, f ? "neu" : "ne", a, b);
            case SELECT -> select(w, out, a, b, in.get(2));
            case CONVERT -> convert(w, t, out, a);
        };
    }

    /**
     * Floating max/min propagating NaN: when either operand is NaN, {@code a + b} (a NaN) is selected. Not
     * {@code max.NaN}, which needs {@code sm_80}.
     */
    private static String maxMin(PtxWriter w, DType t, String which, String a, String b) {
        if (!t.isFloating()) {
            return PtxMath.op(w, t, which, a, b);
        }
        String r = PtxMath.op(w, t, which, a, b);
        String unordered = w.reg(Reg.PRED);
        w.ins("setp.nan." + Reg.arith(t) + " " + unordered + ", " + a + ", " + b);
        return PtxMath.op(w, t, "selp", PtxMath.op(w, t, "add.rn", a, b), r, unordered);
    }

    /** C's {@code fmod}: {@code a - trunc(a/b)·b}, corrected once when the rounded quotient crossed an integer. */
    private static String floatRem(PtxWriter w, DType t, String a, String b) {
        String s = Reg.arith(t);
        String q = w.reg(t);
        w.ins("cvt.rzi." + s + "." + s + " " + q + ", " + PtxMath.op(w, t, "div.rn", a, b));
        String r = PtxMath.fma(w, t, PtxMath.op(w, t, "neg", q), b, a);
        String crossed = w.reg(Reg.PRED);
        w.ins("setp.lt." + s + " " + crossed + ", " + PtxMath.op(w, t, "mul.rn", r, a) + ", " + Imm.of(t, 0));
        String fixed = PtxMath.op(w, t, "add.rn", r, PtxMath.op(w, t, "copysign", a, PtxMath.op(w, t, "abs", b)));
        r = PtxMath.op(w, t, "selp", fixed, r, crossed);
        r = PtxMath.op(w, t, "copysign", a, r);
        String finiteA = w.reg(Reg.PRED), infiniteB = w.reg(Reg.PRED);
        w.ins("testp.finite." + s + " " + finiteA + ", " + a);
        w.ins("testp.infinite." + s + " " + infiniteB + ", " + b);
        w.ins("and.pred " + infiniteB + ", " + infiniteB + ", " + finiteA);
        return PtxMath.op(w, t, "selp", a, r, infiniteB);
    }

    /** {@code setp} with comparison {@code cmp} ({@code lt}, ..., {@code neu}); BOOL compares as 0 or 1. */
    private static String compare(PtxWriter w, DType t, String cmp, String a, String b) {
        String type = t == DType.BOOL ? "u16" : Reg.arith(t);
        if (t == DType.BOOL) {
            a = widen(w, a);
            b = widen(w, b);
        }
        String p = w.reg(Reg.PRED);
        w.ins("setp." + cmp + "." + type + " " + p + ", " + a + ", " + b);
        return p;
    }

    /** A predicate as 0 or 1 in a 16-bit register. */
    private static String widen(PtxWriter w, String pred) {
        String h = w.reg(Reg.U16);
        w.ins("selp.u16 " + h + ", 1, 0, " + pred);
        return h;
    }

    private static String select(PtxWriter w, DType t, String cond, String a, String b) {
        if (t != DType.BOOL) {
            return PtxMath.op(w, t, "selp", a, b, cond);
        }
        String taken = w.reg(Reg.PRED), notCond = w.reg(Reg.PRED), other = w.reg(Reg.PRED), r = w.reg(Reg.PRED);
        w.ins("and.pred " + taken + ", " + cond + ", " + a);
        w.ins("not.pred " + notCond + ", " + cond);
        w.ins("and.pred " + other + ", " + notCond + ", " + b);
        w.ins("or.pred " + r + ", " + taken + ", " + other);
        return r;
    }

    private static String convert(PtxWriter w, DType from, DType to, String a) {
        if (from == to) {
            return a;
        }
        if (to == DType.BOOL) {
            String p = w.reg(Reg.PRED);
            w.ins("setp." + (from.isFloating() ? "neu" : "ne") + "." + Reg.arith(from) + " " + p + ", " + a + ", "
                    + Imm.of(from, 0));
            return p;
        }
        if (from == DType.BOOL) {
            return PtxMath.op(w, to, "selp", Imm.of(to, 1), Imm.of(to, 0), a);
        }
        String r = w.reg(to);
        String mode = to.isFloating() ? (from == DType.F32 && to == DType.F64 ? "" : ".rn")
                : from.isFloating() ? ".rzi" : "";
        String types = to == DType.I32 && from == DType.I64 ? ".u32.u64" : "." + Reg.arith(to) + "." + Reg.arith(from);
        w.ins("cvt" + mode + types + " " + r + ", " + a);
        return r;
    }
}
