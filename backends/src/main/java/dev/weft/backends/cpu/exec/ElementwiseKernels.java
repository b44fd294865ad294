package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.BinaryOp;
import dev.weft.backends.cpu.kernels.Comparison;
import dev.weft.backends.cpu.kernels.Conversions;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.UnaryOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import java.util.Map;

/** Binds the elementwise ops of the lowered module to their kernels. */
final class ElementwiseKernels {
    private ElementwiseKernels() {
    }

    private static final Map<String, BinaryOp> BINARY = Map.of(StableHlo.ADD, BinaryOp.ADD,
            StableHlo.SUBTRACT, BinaryOp.SUB, StableHlo.MULTIPLY, BinaryOp.MUL, StableHlo.DIVIDE, BinaryOp.DIV,
            StableHlo.POWER, BinaryOp.POW,
            StableHlo.MAXIMUM, BinaryOp.MAX, StableHlo.MINIMUM, BinaryOp.MIN, StableHlo.REMAINDER, BinaryOp.REM);

    private static final Map<String, UnaryOp> UNARY = Map.of(StableHlo.NEGATE, UnaryOp.NEG,
            StableHlo.ABS, UnaryOp.ABS, StableHlo.EXP, UnaryOp.EXP, StableHlo.LOG, UnaryOp.LOG,
            StableHlo.SQRT, UnaryOp.SQRT,
            StableHlo.RSQRT, UnaryOp.RSQRT, StableHlo.TANH, UnaryOp.TANH, StableHlo.SINE, UnaryOp.SIN,
            StableHlo.COSINE, UnaryOp.COS);

    /** The kernel of an elementwise op ({@link StableHlo#isElementwise}). */
    static ElementwiseKernel of(Op op) {
        String name = op.name();
        DType in = op.operand(0).tensorType().dtype();
        DType out = op.result().tensorType().dtype();
        BinaryOp binary = BINARY.get(name);
        if (binary != null) {
            return (a, b, c, o, n) -> Elementwise.binary(binary, in, a, b, o, n);
        }
        UnaryOp unary = UNARY.get(name);
        if (unary != null) {
            return (a, b, c, o, n) -> Elementwise.unary(unary, in, a, o, n);
        }
        return switch (name) {
            case StableHlo.COMPARE -> {
                Comparison cmp = comparison(op);
                yield (a, b, c, o, n) -> Elementwise.compare(cmp, in, a, b, o, n);
            }
            case StableHlo.SELECT -> (a, b, c, o, n) -> Elementwise.select(out, a, b, c, o, n);
            case StableHlo.CONVERT -> (a, b, c, o, n) -> Conversions.convert(in, out, a, o, n);
            default -> throw new IllegalArgumentException("not an elementwise op");
        };
    }

    private static Comparison comparison(Op op) {
        if (op.attr("comparison_direction") instanceof Attr.Enum e) {
            return Comparison.valueOf(e.value());
        }
        throw new IllegalArgumentException("missing comparison_direction");
    }
}
