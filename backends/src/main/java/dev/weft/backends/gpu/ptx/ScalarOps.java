package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import java.util.List;

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

    /** Emits {@code op} on operand registers {@code in} and returns the result register. */
    static String emit(PtxWriter w, Op op, List<String> in) {
        DType t = op.operand(0).tensorType().dtype();
        DType out = op.result().tensorType().dtype();
        return switch (op.name()) {
            case StableHlo.COMPARE -> compare(w, t, direction(op), in.get(0), in.get(1));
            case StableHlo.SELECT -> select(w, out, in.get(0), in.get(1), in.get(2));
            case StableHlo.CONVERT -> convert(w, t, out, in.get(0));
            default -> {
                if (t == DType.BOOL) {
                    throw new IllegalArgumentException(op.name() + " is not defined on bool");
                }
                yield in.size() == 2 ? binary(w, op.name(), t, in.get(0), in.get(1)) : unary(w, op.name(), t,
                        in.get(0));
            }
        };
    }

    /** {@code name(a, b)} on non-BOOL elements of {@code t}; reductions combine with it too. */
    static String binary(PtxWriter w, String name, DType t, String a, String b) {
        boolean f = t.isFloating();
        return switch (name) {
            case StableHlo.ADD -> PtxMath.op(w, t, f ? "add.rn" : "add", a, b);
            case StableHlo.SUBTRACT -> PtxMath.op(w, t, f ? "sub.rn" : "sub", a, b);
            case StableHlo.MULTIPLY -> PtxMath.op(w, t, f ? "mul.rn" : "mul.lo", a, b);
            case StableHlo.DIVIDE -> PtxMath.op(w, t, f ? "div.rn" : "div", a, b);
            case StableHlo.REMAINDER -> f ? floatRem(w, t, a, b) : PtxMath.op(w, t, "rem", a, b);
            case StableHlo.POWER -> f ? PtxMath.pow(w, t, a, b) : PtxMath.intPow(w, t, a, b);
            case StableHlo.MAXIMUM -> maxMin(w, t, "max", a, b);
            case StableHlo.MINIMUM -> maxMin(w, t, "min", a, b);
            default -> throw new IllegalArgumentException("not a binary elementwise op: " + name);
        };
    }

    private static String unary(PtxWriter w, String name, DType t, String a) {
        if (!t.isFloating() && !name.equals(StableHlo.NEGATE) && !name.equals(StableHlo.ABS)) {
            throw new IllegalArgumentException(name + " is defined on floating dtypes only");
        }
        return switch (name) {
            case StableHlo.NEGATE -> PtxMath.op(w, t, "neg", a);
            case StableHlo.ABS -> PtxMath.op(w, t, "abs", a);
            case StableHlo.EXP -> PtxMath.exp(w, t, a);
            case StableHlo.LOG -> PtxMath.log(w, t, a);
            case StableHlo.SQRT -> PtxMath.op(w, t, "sqrt.rn", a);
            case StableHlo.RSQRT -> PtxMath.op(w, t, "div.rn", Imm.of(t, 1), PtxMath.op(w, t, "sqrt.rn", a));
            case StableHlo.TANH -> PtxMath.tanh(w, t, a);
            case StableHlo.SINE -> PtxMath.sin(w, t, a);
            case StableHlo.COSINE -> PtxMath.cos(w, t, a);
            default -> throw new IllegalArgumentException("not a unary elementwise op: " + name);
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

    private static String direction(Op op) {
        if (op.attr("comparison_direction") instanceof Attr.Enum e) {
            return e.value();
        }
        throw new IllegalArgumentException("missing comparison_direction");
    }

    private static String compare(PtxWriter w, DType t, String dir, String a, String b) {
        String cmp = switch (dir) {
            case "EQ", "LT", "LE", "GT", "GE" -> dir.toLowerCase();
            case "NE" -> t.isFloating() ? "neu" : "ne";
            default -> throw new IllegalArgumentException("unknown comparison " + dir);
        };
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
