package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Builds lowered modules by hand: ops are appended to the innermost open block. */
final class Ir {
    static final SourceLocation LOC = new SourceLocation("Prog", "main", "Prog.java", 42);

    private final List<List<Op>> open = new ArrayList<>();

    Ir() {
        open.add(new ArrayList<>());
    }

    static TensorType t(DType d, long... dims) {
        return TensorType.of(d, dims);
    }

    static List<Value> args(Type... types) {
        return Arrays.stream(types).map(Value::new).toList();
    }

    Op op(String name, List<Value> in, List<Type> out, Map<String, Attr> attrs, List<Block> regions) {
        Op op = new Op(name, in, out, attrs, regions, LOC);
        open.getLast().add(op);
        return op;
    }

    Value op(String name, Type out, Value... in) {
        return op(name, List.of(in), List.of(out), Map.of(), List.of()).result();
    }

    Value op(ElementwiseOp e, Type out, Value... in) {
        return op(e.mlirName(), out, in);
    }

    Value binary(ElementwiseOp e, Value a, Value b) {
        return op(e.mlirName(), a.type(), a, b);
    }

    /** {@code e(a, b)} whose operands {@code dying} die here. */
    Value binary(ElementwiseOp e, Value a, Value b, int... dying) {
        return op(e.mlirName(), List.of(a, b), List.of(a.type()),
                Map.of(StableHlo.LAST_USE, Attr.I64Array.of(dying)), List.of()).result();
    }

    Value compare(String dir, Value a, Value b) {
        ElementwiseOp e = ElementwiseOp.valueOf(dir);
        return op(e.mlirName(), List.of(a, b), List.of(TensorType.of(DType.BOOL, a.tensorType().shape().dims())),
                Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", dir)), List.of())
                .result();
    }

    Value constant(TensorType type, MemorySegment data) {
        return op(StableHlo.CONSTANT, List.of(), List.of(type), Map.of("value", new Attr.Dense(type, data)), List.of())
                .result();
    }

    Value f32(float... v) {
        return constant(t(DType.F32, v.length == 1 ? new long[0] : new long[] {v.length}), MemorySegment.ofArray(v));
    }

    Value i32(int v) {
        return constant(t(DType.I32), MemorySegment.ofArray(new int[] {v}));
    }

    /** Opens a block for a region; finish it with {@link #close}. */
    void begin() {
        open.add(new ArrayList<>());
    }

    /** Closes the innermost block, returning {@code results} with {@code stablehlo.return}. */
    Block close(List<Value> arguments, Value... results) {
        List<Op> ops = open.removeLast();
        ops.add(new Op(StableHlo.RETURN, List.of(results), List.of(), Map.of(), List.of(), LOC));
        return new Block(arguments, ops);
    }

    Module module(List<Value> arguments, Value... results) {
        List<Op> ops = open.getFirst();
        ops.add(new Op(StableHlo.FUNC_RETURN, List.of(results), List.of(), Map.of(), List.of(), LOC));
        return new Module(CpuTarget.NAME, List.of(new Func("main", new Block(arguments, ops))));
    }
}
