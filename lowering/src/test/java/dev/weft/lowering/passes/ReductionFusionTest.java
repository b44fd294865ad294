package dev.weft.lowering.passes;

import static dev.weft.lowering.Ops.names;
import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ReductionFusionTest {
    private static final TensorType F = TensorType.of(DType.F32);
    private static final TensorType F34 = TensorType.of(DType.F32, 3, 4);

    private static Module fused(Module m) {
        new ElementwiseFusion(ElementwiseFusion.Inputs.VIEWS).run(m);
        new ReductionFusion().run(m);
        new Verifier().run(m);
        return m;
    }

    /** {@code ^bb0(a, b): return combiner(a, b)} on f32 scalars. */
    private static Block body(String combiner) {
        ModuleBuilder r = new ModuleBuilder(F, F);
        return r.ret(r.op(combiner, F, r.arg(0), r.arg(1)));
    }

    private static Value reduce(ModuleBuilder b, Value x, Block body, long... dims) {
        long[] shape = x.tensorType().shape().dims();
        long[] kept = IntStream.range(0, shape.length)
                .filter(k -> Arrays.stream(dims).noneMatch(d -> d == k)).mapToLong(k -> shape[k]).toArray();
        return b.op(StableHlo.REDUCE, List.of(x, b.constant(0)), List.of(TensorType.of(DType.F32, kept)),
                Map.of("dimensions", Attr.I64Array.of(dims)), List.of(body)).result();
    }

    @Test
    void aReductionOfAFusionBecomesOneFusedReduce() {
        ModuleBuilder b = new ModuleBuilder(F4, F4);
        Value product = b.op(ElementwiseOp.MUL.mlirName(), F4, b.arg(0), b.arg(1));
        Value e = b.op(ElementwiseOp.EXP.mlirName(), F4, product);
        Value sum = reduce(b, e, body(ElementwiseOp.ADD.mlirName()), 0);
        Module m = fused(b.module(sum));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSED_REDUCE, StableHlo.FUNC_RETURN);
        Op op = m.main().body().ops().get(1);
        assertThat(op.operands()).containsExactly(b.arg(0), b.arg(1), m.main().body().ops().getFirst().result());
        assertThat(names(op.regions().get(0))).containsExactly(ElementwiseOp.MUL.mlirName(),
                ElementwiseOp.EXP.mlirName(), StableHlo.RETURN);
        assertThat(names(op.regions().get(1))).containsExactly(ElementwiseOp.ADD.mlirName(), StableHlo.RETURN);
        assertThat(m.main().body().results()).containsExactly(op.result());
        assertThat(m.toMlir()).contains("\"weft.fused_reduce\"(%arg0, %arg1, %0) ({",
                "}) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> tensor<f32>");
    }

    @Test
    void aLoneElementwiseOpOverTrailingAxesIsFused() {
        ModuleBuilder b = new ModuleBuilder(F34);
        Value a = b.op(ElementwiseOp.ABS.mlirName(), F34, b.arg(0));
        Value max = reduce(b, a, body(ElementwiseOp.MAX.mlirName()), 1);
        Module m = fused(b.module(max));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSED_REDUCE, StableHlo.FUNC_RETURN);
        Op op = m.main().body().ops().get(1);
        Block region = op.regions().getFirst();
        assertThat(names(region)).containsExactly(ElementwiseOp.ABS.mlirName(), StableHlo.RETURN);
        assertThat(region.ops().getFirst().operands()).containsExactly(region.arguments().getFirst());
        assertThat(op.result().type()).isEqualTo(TensorType.of(DType.F32, 3));
    }

    @Test
    void aProducerWithAnotherUseIsLeftAlone() {
        ModuleBuilder b = new ModuleBuilder(F4, F4);
        Value product = b.op(ElementwiseOp.MUL.mlirName(), F4, b.arg(0), b.arg(1));
        Value e = b.op(ElementwiseOp.EXP.mlirName(), F4, product);
        Value sum = reduce(b, e, body(ElementwiseOp.ADD.mlirName()), 0);
        Module m = fused(b.module(sum, e));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.CONSTANT, StableHlo.REDUCE,
                StableHlo.FUNC_RETURN);
    }

    @Test
    void leadingAxesAndOtherBodiesAreLeftAlone() {
        ModuleBuilder leading = new ModuleBuilder(F34);
        Value a = leading.op(ElementwiseOp.ABS.mlirName(), F34, leading.arg(0));
        assertThat(names(fused(leading.module(reduce(leading, a, body(ElementwiseOp.ADD.mlirName()), 0)))))
                .contains(ElementwiseOp.ABS.mlirName(), StableHlo.REDUCE);

        ModuleBuilder other = new ModuleBuilder(F4);
        Value n = other.op(ElementwiseOp.NEG.mlirName(), F4, other.arg(0));
        assertThat(names(fused(other.module(reduce(other, n, body(ElementwiseOp.SUB.mlirName()), 0)))))
                .contains(ElementwiseOp.NEG.mlirName(), StableHlo.REDUCE);
    }

    @Test
    void aFusionWithSeveralResultsIsLeftAlone() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value e = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, e);
        Value sum = reduce(b, n, body(ElementwiseOp.ADD.mlirName()), 0);
        Value other = b.op("test.opaque", F4, e);
        Module m = fused(b.module(sum, other));

        assertThat(names(m)).contains(StableHlo.FUSION, StableHlo.REDUCE).doesNotContain(StableHlo.FUSED_REDUCE);
    }

    @Test
    void reductionsInsideLoopBodiesAreFusedAndTheirUsersRewritten() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.BOOL), F4);
        ModuleBuilder inner = new ModuleBuilder();
        Value t = inner.op(ElementwiseOp.TANH.mlirName(), F4, b.arg(1));
        Value max = reduce(inner, t, body(ElementwiseOp.MAX.mlirName()), 0);
        Value back = inner.op(StableHlo.BROADCAST_IN_DIM, List.of(max), List.of(F4),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
        Block ifTrue = inner.ret(back);
        ModuleBuilder no = new ModuleBuilder();
        Block ifFalse = no.ret(b.arg(1));
        Value r = b.op(StableHlo.IF, List.of(b.arg(0)), List.of(F4), Map.of(), List.of(ifTrue, ifFalse)).result();
        Module m = fused(b.module(r));

        assertThat(names(ifTrue)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSED_REDUCE,
                StableHlo.BROADCAST_IN_DIM, StableHlo.RETURN);
        assertThat(ifTrue.ops().get(2).operands()).containsExactly(ifTrue.ops().get(1).result());
        assertThat(m.toMlir()).contains("\"weft.fused_reduce\"");
    }
}
