package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.Map;

/** Single ops built by hand for the generator tests. */
final class HandBuiltOps {
    static final SourceLocation LOC = new SourceLocation("Prog", "main", "Prog.java", 7);

    private HandBuiltOps() {
    }

    static Value value(DType t, long... dims) {
        return new Value(TensorType.of(t, dims));
    }

    static Op op(String name, List<Value> in, Type out, Map<String, Attr> attrs) {
        return new Op(name, in, List.of(out), attrs, List.of(), LOC);
    }

    /** {@code op} on operands of {@code in} (select's condition BOOL) giving {@code out}, over 5x7. */
    static Op elementwise(ElementwiseOp op, DType in, DType out) {
        List<Value> operands = new java.util.ArrayList<>();
        for (int i = 0; i < op.arity(); i++) {
            operands.add(value(op == ElementwiseOp.SELECT && i == 0 ? DType.BOOL : in, 5, 7));
        }
        Map<String, Attr> attrs = op.direction() == null ? Map.of()
                : Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", op.direction()));
        return op(op.mlirName(), operands, TensorType.of(out, 5, 7), attrs);
    }

    /** {@code (x * s) + 1.5} over f32[1000] with a rank-0 {@code s} broadcast inside the region. */
    static Op scaleAndShift() {
        Block region = Block.withArgs(List.of(TensorType.of(DType.F32, 1000), TensorType.of(DType.F32)));
        Value x = region.arguments().get(0), s = region.arguments().get(1);
        TensorType full = TensorType.of(DType.F32, 1000);
        Op splat = new Op(StableHlo.BROADCAST_IN_DIM, List.of(s), List.of(full),
                Map.of("broadcast_dimensions", Attr.I64Array.of(new long[0])), List.of(), LOC);
        Op mul = new Op(ElementwiseOp.MUL.mlirName(), List.of(x, splat.result()), List.of(full), Map.of(), List.of(),
                LOC);
        java.lang.foreign.MemorySegment one = java.lang.foreign.Arena.global().allocate(4);
        one.set(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 0, 1.5f);
        Op c = new Op(StableHlo.CONSTANT, List.of(), List.of(TensorType.of(DType.F32)),
                Map.of("value", new Attr.Dense(TensorType.of(DType.F32), one)), List.of(), LOC);
        Op bc = new Op(StableHlo.BROADCAST_IN_DIM, List.of(c.result()), List.of(full),
                Map.of("broadcast_dimensions", Attr.I64Array.of(new long[0])), List.of(), LOC);
        Op add = new Op(ElementwiseOp.ADD.mlirName(), List.of(mul.result(), bc.result()), List.of(full), Map.of(),
                List.of(), LOC);
        Op ret = new Op(StableHlo.RETURN, List.of(add.result()), List.of(), Map.of(), List.of(), LOC);
        region.ops().addAll(List.of(splat, mul, c, bc, add, ret));
        return new Op(StableHlo.FUSION, List.of(value(DType.F32, 1000), value(DType.F32)), List.of(full), Map.of(),
                List.of(region), LOC);
    }
}
