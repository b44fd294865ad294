package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** Which {@code stablehlo.while} loops have a trip count known when planned, on loops built by hand. */
class CountedLoopTest {
    private static final SourceLocation LOC = new SourceLocation("Prog", "main", "Prog.java", 3);
    private static final TensorType I32 = TensorType.of(DType.I32), DATA = TensorType.of(DType.F32, 4);

    private final Map<Value, Op> outer = new IdentityHashMap<>();

    private static Op op(String name, List<Value> in, TensorType out, Map<String, Attr> attrs, List<Block> regions) {
        return new Op(name, in, out == null ? List.of() : List.of(out), attrs, regions, LOC);
    }

    private static Op constant(int v, List<Op> into) {
        MemorySegment m = Arena.global().allocate(4);
        m.set(ValueLayout.JAVA_INT, 0, v);
        Op c = op(StableHlo.CONSTANT, List.of(), I32, Map.of("value", new Attr.Dense(I32, m)), List.of());
        into.add(c);
        return c;
    }

    private static Op compare(String dir, Value a, Value b, List<Op> into) {
        Op c = op(ElementwiseOp.LT.mlirName(), List.of(a, b), TensorType.of(DType.BOOL),
                Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", dir)), List.of());
        into.add(c);
        return c;
    }

    private static Op add(Value a, Value b, List<Op> into) {
        Op c = op(ElementwiseOp.ADD.mlirName(), List.of(a, b), I32, Map.of(), List.of());
        into.add(c);
        return c;
    }

    private static Block block(BiFunction<Value, List<Op>, List<Value>> contents) {
        Block b = Block.withArgs(List.of(I32, DATA));
        List<Op> ops = new ArrayList<>();
        List<Value> results = contents.apply(b.arguments().getFirst(), ops);
        ops.add(op(StableHlo.RETURN, results, null, Map.of(), List.of()));
        b.ops().addAll(ops);
        return b;
    }

    /** A while over (counter, data) starting at {@code lo}; the body returns its data unchanged. */
    private OptionalLong trips(int lo, BiFunction<Value, List<Op>, Value> cond,
                               BiFunction<Value, List<Op>, Value> step) {
        List<Op> main = new ArrayList<>();
        Value start = constant(lo, main).result();
        main.forEach(o -> outer.put(o.result(), o));
        Block c = block((i, ops) -> List.of(cond.apply(i, ops)));
        Block[] body = new Block[1];
        body[0] = Block.withArgs(List.of(I32, DATA));
        List<Op> ops = new ArrayList<>();
        Value next = step.apply(body[0].arguments().getFirst(), ops);
        ops.add(op(StableHlo.RETURN, List.of(next, body[0].arguments().get(1)), null, Map.of(), List.of()));
        body[0].ops().addAll(ops);
        Op loop = new Op(StableHlo.WHILE, List.of(start, new Value(DATA)), List.of(I32, DATA), Map.of(),
                List.of(c, body[0]), LOC);
        return CountedLoop.trips(loop, outer);
    }

    private static Value below(int hi, Value i, List<Op> ops) {
        return compare("LT", i, constant(hi, ops).result(), ops).result();
    }

    private static Value plus(int k, Value i, List<Op> ops) {
        return add(i, constant(k, ops).result(), ops).result();
    }

    @Test
    void theLoweredForiFormCountsHiMinusLo() {
        assertThat(trips(2, (i, ops) -> below(9, i, ops), (i, ops) -> plus(1, i, ops))).hasValue(7);
        assertThat(trips(0, (i, ops) -> below(200, i, ops), (i, ops) -> add(constant(1, ops).result(), i, ops)
                .result())).hasValue(200);
        assertThat(trips(9, (i, ops) -> below(2, i, ops), (i, ops) -> plus(1, i, ops))).hasValue(0);
    }

    @Test
    void anIncrementInsideAFusionIsFollowed() {
        OptionalLong n = trips(0, (i, ops) -> below(5, i, ops), (i, ops) -> {
            Value one = constant(1, ops).result();
            Block region = Block.withArgs(List.of(I32, I32));
            Op sum = op(ElementwiseOp.ADD.mlirName(), region.arguments(), I32, Map.of(), List.of());
            region.ops().addAll(List.of(sum, op(StableHlo.RETURN, List.of(sum.result()), null, Map.of(),
                    List.of())));
            Op fusion = op(StableHlo.FUSION, List.of(i, one), I32, Map.of(), List.of(region));
            ops.add(fusion);
            return fusion.result();
        });
        assertThat(n).hasValue(5);
    }

    @Test
    void anythingElseIsDataDependent() {
        Value limit = new Value(I32);
        assertThat(trips(0, (i, ops) -> compare("LT", i, limit, ops).result(), (i, ops) -> plus(1, i, ops)))
                .as("bound from an argument").isEmpty();
        assertThat(trips(0, (i, ops) -> below(9, i, ops), (i, ops) -> plus(2, i, ops))).as("step 2").isEmpty();
        assertThat(trips(0, (i, ops) -> compare("LE", i, constant(9, ops).result(), ops).result(),
                (i, ops) -> plus(1, i, ops))).as("<=").isEmpty();
        assertThat(trips(0, (i, ops) -> compare("LT", constant(9, ops).result(), i, ops).result(),
                (i, ops) -> plus(1, i, ops))).as("hi < i").isEmpty();
        assertThat(trips(0, (i, ops) -> {
            ops.add(op(StableHlo.CUSTOM_CALL, List.of(i), I32,
                    Map.of("call_target_name", new Attr.Str("weft.mpi.allreduce")), List.of()));
            return below(9, i, ops);
        }, (i, ops) -> plus(1, i, ops))).as("an effect in the condition").isEmpty();
    }
}
