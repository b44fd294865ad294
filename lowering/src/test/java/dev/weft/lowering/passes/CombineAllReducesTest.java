package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static dev.weft.lowering.passes.ModuleBuilder.WORLD;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.Effect;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * {@code combine-allreduces}: which allreduces share a bucket (communicator, reduce op, dtype, cap, independence,
 * no other effect between), the buckets' order (by readiness), and that each member's uses read its slice.
 */
class CombineAllReducesTest {
    private static final long F4_BYTES = 16;

    /** The custom calls of {@code m}'s main block, in order, without their prefix ({@code allreduce}, ...). */
    private static List<String> calls(Module m) {
        List<String> out = new ArrayList<>();
        for (Op op : m.main().body().ops()) {
            if (op.attr("call_target_name") instanceof Attr.Str s) {
                out.add(s.value().substring("weft.mpi.".length()));
            }
        }
        return out;
    }

    private static List<Long> startCounts(Module m) {
        return IrWalk.ops(m).filter(op -> op.attr("backend_config") instanceof Attr.CommConfig c
                        && c.op() instanceof CommOp.IAllReduce)
                .map(op -> ((Attr.CommConfig) op.attr("backend_config")).data().shape().size()).toList();
    }

    /** Four independent allreduces of f32[4] on the world, each of a unary function of {@code arg0}. */
    private static Module fourIndependent() {
        ModuleBuilder b = new ModuleBuilder(F4);
        List<Value> results = new ArrayList<>();
        for (String unary : List.of(ElementwiseOp.NEG.mlirName(), ElementwiseOp.EXP.mlirName(), ElementwiseOp.TANH.mlirName(), ElementwiseOp.SIN.mlirName())) {
            results.add(b.allreduce(b.op(unary, F4, b.arg(0)), WORLD, ReduceOp.SUM).result());
        }
        return b.module(results.toArray(Value[]::new));
    }

    @Test
    void independentAllreducesShareBucketsUnderTheCap() {
        Module all = fourIndependent();
        new CombineAllReduces().run(all);
        assertThat(calls(all)).containsExactly("iallreduce", "wait_collective");
        assertThat(startCounts(all)).containsExactly(16L);

        Module capped = fourIndependent();
        new CombineAllReduces(2 * F4_BYTES).run(capped);
        assertThat(calls(capped)).containsExactly("iallreduce", "iallreduce", "wait_collective", "wait_collective");
        assertThat(startCounts(capped)).containsExactly(8L, 8L);

        Module alone = fourIndependent();
        new CombineAllReduces(F4_BYTES + 1).run(alone);
        assertThat(calls(alone)).as("a bucket of one stays a blocking allreduce")
                .containsExactly("allreduce", "allreduce", "allreduce", "allreduce");

        Module members = fourIndependent();
        new CombineAllReduces(CombineAllReduces.DEFAULT_BUCKET_BYTES, F4_BYTES).run(members);
        assertThat(startCounts(members)).as("at the member limit").containsExactly(16L);
        Module large = fourIndependent();
        new CombineAllReduces(CombineAllReduces.DEFAULT_BUCKET_BYTES, F4_BYTES - 1).run(large);
        assertThat(calls(large)).as("an allreduce over the member limit joins no bucket")
                .containsExactly("allreduce", "allreduce", "allreduce", "allreduce");
    }

    @Test
    void eachResultIsItsSliceOfTheBucketReshapedBack() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 2, 3), F4);
        Value first = b.allreduce(b.arg(0), WORLD, ReduceOp.SUM).result();
        Value second = b.allreduce(b.arg(1), WORLD, ReduceOp.SUM).result();
        Module m = b.module(first, second);
        new CombineAllReduces().run(m);

        List<Op> ops = m.main().body().ops();
        Op wait = ops.stream().filter(op -> calls(op).equals("wait_collective")).findFirst().orElseThrow();
        List<Value> returned = m.main().body().terminator().operands();
        Op firstReshape = definer(ops, returned.get(0));
        assertThat(firstReshape.name()).isEqualTo(StableHlo.RESHAPE);
        assertThat(firstReshape.result().tensorType()).isEqualTo(TensorType.of(DType.F32, 2, 3));
        Op firstSlice = definer(ops, firstReshape.operand(0));
        assertThat(firstSlice.operand(0)).isSameAs(wait.result());
        assertThat(firstSlice.longs("start_indices")).containsExactly(0);
        assertThat(firstSlice.longs("limit_indices")).containsExactly(6);
        Op secondSlice = definer(ops, returned.get(1));
        assertThat(secondSlice.name()).as("a 1-D member needs no reshape").isEqualTo(StableHlo.SLICE);
        assertThat(secondSlice.longs("start_indices")).containsExactly(6);
        assertThat(secondSlice.longs("limit_indices")).containsExactly(10);
        Op start = definer(ops, wait.operand(0));
        assertThat(wait.operand(1)).as("the wait keeps the bucket alive").isSameAs(start.operand(0));
        assertThat(definer(ops, start.operand(0)).name()).isEqualTo(StableHlo.CONCATENATE);
        assertThat(start.effect()).isEqualTo(wait.effect()).isEqualTo(new Effect.Ordered(WORLD));
    }

    private static String calls(Op op) {
        return op.attr("backend_config") instanceof Attr.CommConfig c ? c.op().kind().label() : "";
    }

    private static Op definer(List<Op> ops, Value v) {
        return ops.stream().filter(op -> op.results().contains(v)).findFirst().orElseThrow();
    }

    /**
     * The calls after the pass of an allreduce of {@code arg0} followed by what {@code second} builds (given the
     * first's result; {@code arg1} has the type {@code type}).
     */
    private static List<String> pair(TensorType type, BiFunction<ModuleBuilder, Value, Value> second) {
        ModuleBuilder b = new ModuleBuilder(F4, type);
        Value a = b.allreduce(b.arg(0), WORLD, ReduceOp.SUM).result();
        Value other = second.apply(b, a);
        Module m = b.module(a, other);
        new CombineAllReduces().run(m);
        return calls(m);
    }

    @Test
    void onlyAllreducesOfOneCommunicatorReduceOpAndDtypeCombine() {
        TensorType f64 = TensorType.of(DType.F64, 4);
        assertThat(pair(f64, (b, a) -> b.allreduce(b.arg(1), WORLD, ReduceOp.SUM).result())).as("dtypes")
                .containsExactly("allreduce", "allreduce");
        assertThat(pair(F4, (b, a) -> b.allreduce(b.arg(1), new ModuleBuilder.Comm("other"), ReduceOp.SUM).result()))
                .as("communicators").containsExactly("allreduce", "allreduce");
        assertThat(pair(F4, (b, a) -> b.allreduce(b.arg(1), WORLD, ReduceOp.MAX).result())).as("reduce ops")
                .containsExactly("allreduce", "allreduce");
        ReduceOp custom = ReduceOp.custom("mine", (x, y) -> x.add(y));
        assertThat(pair(F4, (b, a) -> b.allreduce(b.arg(1), WORLD, custom).result())).as("a custom op")
                .containsExactly("allreduce", "allreduce");
        assertThat(pair(F4, (b, a) -> b.allreduce(b.arg(1), WORLD, ReduceOp.SUM).result())).as("the control")
                .containsExactly("iallreduce", "wait_collective");
    }

    @Test
    void anAllreduceOfAnotherOnesResultIsNotCombinedWithIt() {
        assertThat(pair(F4, (b, a) -> b.allreduce(b.op(ElementwiseOp.ADD.mlirName(), F4, a, b.arg(1)), WORLD, ReduceOp.SUM)
                .result())).containsExactly("allreduce", "allreduce");
    }

    @Test
    void noAllreduceCombinesAcrossAnotherEffect() {
        assertThat(pair(F4, (b, a) -> {
            b.effect(b.arg(1));
            return b.allreduce(b.arg(1), WORLD, ReduceOp.SUM).result();
        })).containsExactly("allreduce", "barrier", "allreduce");
    }

    /**
     * Buckets follow readiness, not the order the allreduces were written: an allreduce written first whose operand
     * is computed last joins the last bucket, and each start precedes the computation that does not feed it.
     */
    @Test
    void bucketsStartInTheOrderTheirOperandsAreReady() {
        ModuleBuilder b = new ModuleBuilder(F4, F4, F4);
        Value late = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(2));
        Value early0 = b.op(ElementwiseOp.NEG.mlirName(), F4, b.arg(0));
        Value early1 = b.op(ElementwiseOp.NEG.mlirName(), F4, b.arg(1));
        Value r0 = b.allreduce(early0, WORLD, ReduceOp.SUM).result();
        Value r1 = b.allreduce(early1, WORLD, ReduceOp.SUM).result();
        Value lateProduct = b.op(ElementwiseOp.TANH.mlirName(), F4, late);
        Value r2 = b.allreduce(lateProduct, WORLD, ReduceOp.SUM).result();
        Value r3 = b.allreduce(b.op(ElementwiseOp.SIN.mlirName(), F4, b.arg(2)), WORLD, ReduceOp.SUM).result();
        Module m = b.module(r2, r0, r3, r1);
        new CombineAllReduces(2 * F4_BYTES).run(m);

        List<Op> ops = m.main().body().ops();
        List<Op> starts = ops.stream().filter(op -> calls(op).equals("iallreduce")).toList();
        assertThat(starts).hasSize(2);
        List<Value> firstBucket = definer(ops, starts.get(0).operand(0)).operands();
        assertThat(firstBucket).containsExactly(early0, early1);
        int firstStart = ops.indexOf(starts.get(0));
        assertThat(ops.indexOf(definer(ops, lateProduct))).as("computation after the first start")
                .isGreaterThan(firstStart);
        int firstWait = ops.indexOf(ops.stream().filter(op -> calls(op).equals("wait_collective")).findFirst()
                .orElseThrow());
        assertThat(ops.indexOf(starts.get(1))).as("both buckets in flight at once").isLessThan(firstWait);
    }

    /** The pass depends on nothing but the module: two builds of one program fuse to the same text. */
    @Test
    void deterministic() {
        Module a = fourIndependent();
        Module b = fourIndependent();
        new CombineAllReduces(3 * F4_BYTES).run(a);
        new CombineAllReduces(3 * F4_BYTES).run(b);
        assertThat(a.toMlir()).isEqualTo(b.toMlir());
    }

    /** After the pass the module threads and verifies, the starts and waits on the world's one token chain. */
    @Test
    void threadsAndVerifies() {
        Module m = fourIndependent();
        new CombineAllReduces(2 * F4_BYTES).run(m);
        new ThreadTokens().run(m);
        new Verifier().run(m);
        assertThat(m.main().body().ops().stream().filter(op -> op.name().equals(StableHlo.AFTER_ALL)))
                .as("one chain").hasSize(1);
    }
}
