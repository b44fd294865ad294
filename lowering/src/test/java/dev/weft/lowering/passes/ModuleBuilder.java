package dev.weft.lowering.passes;

import java.lang.foreign.ValueLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.Arena;
import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.TestTarget;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Effect;
import dev.weft.spi.SourceLocation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builds lowered modules op by op for pass tests; op {@code k} of a builder sits at {@code Test.java:k+1}. */
final class ModuleBuilder {
    static final TensorType F4 = TensorType.of(DType.F32, 4);
    static final TensorType F8 = TensorType.of(DType.F32, 8);

    /** A communicator that is never run: ops ordered on it only need its identity. */
    record Comm(String name) implements CommHandle {
        @Override
        public int rank() {
            return 0;
        }

        @Override
        public int size() {
            return 2;
        }

        @Override
        public CommHandle split(int color, int key, SourceLocation where) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CommHandle dup(SourceLocation where) {
            throw new UnsupportedOperationException();
        }
    }

    static final Comm WORLD = new Comm("world");

    private final Block block;

    ModuleBuilder(Type... args) {
        block = Block.withArgs(List.of(args));
    }

    Value arg(int i) {
        return block.arguments().get(i);
    }

    Block block() {
        return block;
    }

    Op op(String name, List<Value> operands, List<Type> types, Map<String, Attr> attrs, List<Block> regions) {
        return op(name, operands, types, attrs, regions, Effect.PURE);
    }

    private Op op(String name, List<Value> operands, List<Type> types, Map<String, Attr> attrs, List<Block> regions,
                  Effect effect) {
        Op op = new Op(name, operands, types, attrs, regions,
                new SourceLocation("Test", "body", "Test.java", block.ops().size() + 1), effect);
        block.ops().add(op);
        return op;
    }

    Value op(String name, Type type, Value... operands) {
        return op(name, List.of(operands), List.of(type), Map.of(), List.of()).result();
    }

    /** A side-effecting communication call threading a token: {@code (x, token) -> (x', token')}. */
    Op send(Value x, Value token) {
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str("weft.mpi.send"));
        attrs.put("has_side_effect", new Attr.Bool(true));
        attrs.put("backend_config", new Attr.Dict(Map.of("peer", Attr.Int.i64(1))));
        return op(StableHlo.CUSTOM_CALL, List.of(x, token), List.of(x.type(), TokenType.INSTANCE), attrs, List.of(),
                new Effect.Ordered(WORLD));
    }

    /** A custom call ordered on {@link #WORLD}, with {@code has_side_effect = true} and no token. */
    Op effect(Value x) {
        return custom(x, new Effect.Ordered(WORLD));
    }

    /** A custom call with {@code has_side_effect = true}, no token and the effect {@code effect}. */
    Op custom(Value x, Effect effect) {
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str("weft.mpi.barrier"));
        attrs.put("has_side_effect", new Attr.Bool(true));
        return op(StableHlo.CUSTOM_CALL, List.of(x), List.of(x.type()), attrs, List.of(), effect);
    }

    /** A blocking {@code weft.mpi.allreduce} of {@code x} on {@code comm}, as lowered (no token yet). */
    Op allreduce(Value x, CommHandle comm, ReduceOp reduce) {
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str("weft.mpi.allreduce"));
        attrs.put("has_side_effect", new Attr.Bool(true));
        attrs.put("api_version", Attr.Int.i32(4));
        attrs.put("backend_config", new Attr.CommConfig(new CommOp.AllReduce(comm, reduce), x.tensorType().aval()));
        return op(StableHlo.CUSTOM_CALL, List.of(x), List.of(x.type()), attrs, List.of(), new Effect.Ordered(comm));
    }

    Value constant(float v) {
        MemorySegment seg = Arena.ofAuto().allocate(4);
        seg.set(ValueLayout.JAVA_FLOAT, 0, v);
        TensorType t = TensorType.of(DType.F32);
        return op(StableHlo.CONSTANT, List.of(), List.of(t), Map.of("value", new Attr.Dense(t, seg)), List.of())
                .result();
    }

    /** Ends the block in {@code stablehlo.return} (for nested blocks). */
    Block ret(Value... results) {
        op(StableHlo.RETURN, List.of(results), List.of(), Map.of(), List.of());
        return block;
    }

    Module module(Value... results) {
        op(StableHlo.FUNC_RETURN, List.of(results), List.of(), Map.of(), List.of());
        return new Module(TestTarget.CPU.name(), List.of(new Func("main", block)));
    }
}
