package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.WORLD;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SumBeforeAllreduceTest {
    private static final TensorType F = TensorType.of(DType.F32);
    private static final TensorType F2X4 = TensorType.of(DType.F32, 2, 4);
    private static final TensorType F4 = TensorType.of(DType.F32, 4);

    private static Block body(String combiner) {
        ModuleBuilder r = new ModuleBuilder(F, F);
        return r.ret(r.op(combiner, F, r.arg(0), r.arg(1)));
    }

    /** {@code x} of f32[2, 4] reduced over axis 0 by {@code combiner} from {@code init}. */
    private static Value reduce(ModuleBuilder b, Value x, String combiner, float init) {
        return b.op(StableHlo.REDUCE, List.of(x, b.constant(init)), List.of(F4),
                Map.of("dimensions", Attr.I64Array.of(0)), List.of(body(combiner))).result();
    }

    /** The ops of {@code m}'s main block as {@code name[:count]}, the count an allreduce's elements. */
    private static List<String> ops(Module m) {
        return m.main().body().ops().stream().map(op -> op.attr("backend_config") instanceof Attr.CommConfig c
                ? "allreduce:" + c.data().shape().size() : op.name()).toList();
    }

    @Test
    void aSumOfAnAllreduceBecomesAnAllreduceOfTheSum() {
        ModuleBuilder b = new ModuleBuilder(F2X4);
        Value all = b.allreduce(b.arg(0), WORLD, ReduceOp.SUM).result();
        Module m = b.module(reduce(b, all, ElementwiseOp.ADD.mlirName(), 0));
        new SumBeforeAllreduce().run(m);
        new Verifier().run(m);
        assertThat(ops(m)).containsExactly(StableHlo.CONSTANT, StableHlo.REDUCE, "allreduce:4",
                StableHlo.FUNC_RETURN);
        Op reduce = m.main().body().ops().get(1);
        assertThat(reduce.operand(0)).isSameAs(b.arg(0));
        assertThat(m.main().body().results().getFirst()).isSameAs(m.main().body().ops().get(2).result());
    }

    @Test
    void otherReductionsUsesInitsAndEffectsInBetweenAreLeftAlone() {
        // a max of a sum allreduce; a sum of a max allreduce; a sum from 1; a sum whose allreduce has another use;
        // a sum with another collective between it and its allreduce
        for (int c = 0; c < 5; c++) {
            ModuleBuilder b = new ModuleBuilder(F2X4);
            Value all = b.allreduce(b.arg(0), WORLD, c == 1 ? ReduceOp.MAX : ReduceOp.SUM).result();
            Value extra = c == 3 ? b.op(ElementwiseOp.NEG.mlirName(), F2X4, all) : null;
            if (c == 4) {
                b.effect(b.arg(0));
            }
            Value sum = reduce(b, all, c == 0 ? ElementwiseOp.MAX.mlirName() : ElementwiseOp.ADD.mlirName(),
                    c == 2 ? 1 : 0);
            Module m = extra == null ? b.module(sum) : b.module(sum, extra);
            List<String> before = ops(m);
            new SumBeforeAllreduce().run(m);
            assertThat(ops(m)).as("case " + c).isEqualTo(before).contains("allreduce:8");
        }
    }

    @Test
    void nestedBlocksAreRewrittenToo() {
        ModuleBuilder inner = new ModuleBuilder(F2X4);
        Value all = inner.allreduce(inner.arg(0), WORLD, ReduceOp.SUM).result();
        Block region = inner.ret(reduce(inner, all, ElementwiseOp.ADD.mlirName(), 0));
        ModuleBuilder b = new ModuleBuilder(F2X4);
        Value wrapped = b.op("stablehlo.test_region", List.of(b.arg(0)), List.of(F4), Map.of(), List.of(region))
                .result();
        Module m = b.module(wrapped);
        new SumBeforeAllreduce().run(m);
        assertThat(IrWalk.ops(m).filter(op -> op.attr("backend_config") instanceof Attr.CommConfig)
                .map(op -> ((Attr.CommConfig) op.attr("backend_config")).data().shape().size()))
                .containsExactly(4L);
    }
}
