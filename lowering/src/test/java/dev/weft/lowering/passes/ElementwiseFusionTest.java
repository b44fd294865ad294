package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.lowering.ir.TensorType;
import static dev.weft.lowering.Ops.names;
import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static dev.weft.lowering.passes.ModuleBuilder.F8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ElementwiseFusionTest {
    private static Module fused(Module m) {
        new ElementwiseFusion(ElementwiseFusion.Inputs.VIEWS).run(m);
        new Verifier().run(m);
        return m;
    }

    @Test
    void chainBecomesOneFusionOverItsExternalInputs() {
        ModuleBuilder b = new ModuleBuilder(F4, F4);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, a, b.arg(1));
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, s);
        Module m = fused(b.module(n));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().getFirst();
        assertThat(fusion.operands()).containsExactly(b.arg(0), b.arg(1));
        assertThat(fusion.location().line()).isEqualTo(3);
        Block region = fusion.regions().getFirst();
        assertThat(names(region)).containsExactly(ElementwiseOp.EXP.mlirName(), ElementwiseOp.ADD.mlirName(),
                ElementwiseOp.NEG.mlirName(), StableHlo.RETURN);
        assertThat(region.ops().get(0).operands()).containsExactly(region.arguments().get(0));
        assertThat(region.ops().get(1).operands()).containsExactly(a, region.arguments().get(1));
        assertThat(region.results()).containsExactly(n);
        assertThat(m.main().body().results()).containsExactly(fusion.result());
    }

    @Test
    void aLongChainIsCutIntoFusionsOfAtMostMaxMembers() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value v = b.arg(0);
        int n = 3 * ElementwiseFusion.MAX_MEMBERS + 10;
        for (int k = 0; k < n; k++) {
            v = b.op(k % 2 == 0 ? ElementwiseOp.EXP.mlirName() : ElementwiseOp.NEG.mlirName(), F4, v);
        }
        Module m = fused(b.module(v));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUSION, StableHlo.FUSION, StableHlo.FUSION,
                StableHlo.FUNC_RETURN);
        int total = 0;
        for (Op fusion : m.main().body().ops().subList(0, 4)) {
            int size = fusion.regions().getFirst().ops().size() - 1;
            assertThat(size).isLessThanOrEqualTo(ElementwiseFusion.MAX_MEMBERS);
            total += size;
        }
        assertThat(total).isEqualTo(n);
    }

    @Test
    void everyValueUsedOutsideTheGroupIsAResult() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, a);
        Value later = b.op("test.opaque", F4, a);
        Module m = fused(b.module(n, later));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, "test.opaque", StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().getFirst();
        assertThat(fusion.regions().getFirst().results()).containsExactly(a, n);
        assertThat(m.main().body().ops().get(1).operands()).containsExactly(fusion.results().get(0));
        assertThat(m.main().body().results()).containsExactly(fusion.results().get(1),
                m.main().body().ops().get(1).result());
    }

    @Test
    void groupsHaveOneShape() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value wide = b.op(StableHlo.BROADCAST_IN_DIM, List.of(a), List.of(F8),
                Map.of("broadcast_dimensions", Attr.I64Array.of(0)), List.of()).result();
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F8, wide);
        Value t = b.op(ElementwiseOp.TANH.mlirName(), F8, n);
        Module m = fused(b.module(t));

        assertThat(names(m)).containsExactly(ElementwiseOp.EXP.mlirName(), StableHlo.BROADCAST_IN_DIM, StableHlo.FUSION,
                StableHlo.FUNC_RETURN);
        assertThat(names(m.main().body().ops().get(2).regions().getFirst()))
                .containsExactly(ElementwiseOp.NEG.mlirName(), ElementwiseOp.TANH.mlirName(), StableHlo.RETURN);
    }

    @Test
    void scalarBroadcastsAreFusedSoTheRegionTakesTheScalar() {
        TensorType scalar = TensorType.of(DType.F32);
        ModuleBuilder b = new ModuleBuilder(F4, scalar);
        Value wide = b.op(StableHlo.BROADCAST_IN_DIM, List.of(b.arg(1)), List.of(F4),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, b.arg(0), wide);
        Value mask = b.op(ElementwiseOp.LT.mlirName(), List.of(s, b.arg(0)), List.of(TensorType.of(DType.BOOL, 4)),
                Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", "GT")),
                List.of()).result();
        Value pick = b.op(ElementwiseOp.SELECT.mlirName(), F4, mask, s, wide);
        Module m = fused(b.module(pick));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().getFirst();
        assertThat(fusion.operands()).containsExactly(b.arg(1), b.arg(0));
        Block region = fusion.regions().getFirst();
        assertThat(names(region)).containsExactly(StableHlo.BROADCAST_IN_DIM, ElementwiseOp.ADD.mlirName(),
                ElementwiseOp.LT.mlirName(),
                ElementwiseOp.SELECT.mlirName(), StableHlo.RETURN);
        assertThat(region.arguments().getFirst().type()).isEqualTo(scalar);
        assertThat(region.results()).containsExactly(pick);
    }

    @Test
    void aBroadcastScalarThatTwoFusionsUseIsCopiedIntoEachInsteadOfPassedBetweenThem() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.F32));
        Value zero = b.op(StableHlo.BROADCAST_IN_DIM, List.of(b.arg(1)), List.of(F4),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
        Value first = b.op(ElementwiseOp.NEG.mlirName(), F4, b.op(ElementwiseOp.MAX.mlirName(), F4, b.arg(0), zero));
        Value between = b.op("test.opaque", F4, first);
        Value second = b.op(ElementwiseOp.NEG.mlirName(), F4, b.op(ElementwiseOp.MAX.mlirName(), F4, between, zero));
        Module m = fused(b.module(second));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, "test.opaque", StableHlo.FUSION,
                StableHlo.FUNC_RETURN);
        for (Op fusion : List.of(m.main().body().ops().get(0), m.main().body().ops().get(2))) {
            assertThat(fusion.results()).as("no broadcast zeros handed on").hasSize(1);
            assertThat(fusion.operands()).contains(b.arg(1));
            assertThat(names(fusion.regions().getFirst())).containsOnlyOnce(StableHlo.BROADCAST_IN_DIM);
        }
    }

    @Test
    void aLoneBroadcastStaysOutsideAnyFusion() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32));
        Value wide = b.op(StableHlo.BROADCAST_IN_DIM, List.of(b.arg(0)), List.of(F4),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
        Module m = fused(b.module(b.op("test.opaque", F4, wide)));

        assertThat(names(m)).containsExactly(StableHlo.BROADCAST_IN_DIM, "test.opaque", StableHlo.FUNC_RETURN);
    }

    @Test
    void neverGroupsAcrossAnEffect() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        b.effect(b.arg(0));
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, a);
        Module m = fused(b.module(n));

        assertThat(names(m)).containsExactly(ElementwiseOp.EXP.mlirName(), StableHlo.CUSTOM_CALL,
                ElementwiseOp.NEG.mlirName(),
                StableHlo.FUNC_RETURN);
    }

    @Test
    void neverMovesAGroupValuePastAnOutsideUser() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value opaque = b.op("test.opaque", F4, a);
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, a, opaque);
        Module m = fused(b.module(s));

        assertThat(names(m)).containsExactly(ElementwiseOp.EXP.mlirName(), "test.opaque",
                ElementwiseOp.ADD.mlirName(), StableHlo.FUNC_RETURN);
    }

    @Test
    void fusesInsideIfBranches() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.BOOL));
        ModuleBuilder yes = new ModuleBuilder();
        yes.ret(yes.op(ElementwiseOp.NEG.mlirName(), F4, yes.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0))));
        ModuleBuilder no = new ModuleBuilder();
        no.ret(b.arg(0));
        Op branch = b.op(StableHlo.IF, List.of(b.arg(1)), List.of(F4), Map.of(), List.of(yes.block(), no.block()));
        Module m = fused(b.module(branch.result()));

        assertThat(names(branch.regions().getFirst())).containsExactly(StableHlo.FUSION, StableHlo.RETURN);
        assertThat(branch.regions().getFirst().ops().getFirst().operands()).containsExactly(b.arg(0));
        assertThat(names(m)).containsExactly(StableHlo.IF, StableHlo.FUNC_RETURN);
    }

    private static Value slice(ModuleBuilder b, Value source, long start) {
        Map<String, Attr> attrs = Map.of("start_indices", Attr.I64Array.of(start),
                "limit_indices", Attr.I64Array.of(start + 4), "strides", Attr.I64Array.of(1L));
        return b.op(StableHlo.SLICE, List.of(source), List.of(F4), attrs, List.of()).result();
    }

    @Test
    void aSliceOnlyTheGroupReadsBecomesAViewOfItsSource() {
        ModuleBuilder b = new ModuleBuilder(F8, F4);
        Value left = slice(b, b.arg(0), 0);
        Value right = slice(b, b.arg(0), 3);
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, left, right);
        Value n = b.op(ElementwiseOp.MUL.mlirName(), F4, s, b.arg(1));
        Module m = fused(b.module(n));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().getFirst();
        assertThat(fusion.operands()).containsExactly(b.arg(0), b.arg(0), b.arg(1));
        assertThat(fusion.regions().getFirst().arguments()).extracting(Value::type).containsExactly(F4, F4, F4);
        assertThat(fusion.attr(StableHlo.FUSION_SLICE_STARTS)).isEqualTo(new Attr.Array(List.of(
                Attr.I64Array.of(0L), Attr.I64Array.of(3L), Attr.I64Array.of(new long[0]))));
        assertThat(StableHlo.fusionSliceStarts(fusion, 1)).containsExactly(3);
        assertThat(StableHlo.fusionSliceStarts(fusion, 2)).isEmpty();
    }

    @Test
    void aSliceAlsoUsedOutsideTheGroupStaysMaterialised() {
        ModuleBuilder b = new ModuleBuilder(F8, F4);
        Value left = slice(b, b.arg(0), 2);
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, left, b.arg(1));
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, s);
        Module m = fused(b.module(n, left));

        assertThat(names(m)).containsExactly(StableHlo.SLICE, StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().get(1);
        assertThat(fusion.operands()).containsExactly(left, b.arg(1));
        assertThat(fusion.attr(StableHlo.FUSION_SLICE_STARTS)).isNull();
    }

    @Test
    void wholeInputsKeepSlices() {
        ModuleBuilder b = new ModuleBuilder(F8, F4);
        Value left = slice(b, b.arg(0), 1);
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, b.op(ElementwiseOp.ADD.mlirName(), F4, left, b.arg(1)));
        Module m = b.module(n);
        new ElementwiseFusion(ElementwiseFusion.Inputs.WHOLE).run(m);

        assertThat(names(m)).containsExactly(StableHlo.SLICE, StableHlo.FUSION, StableHlo.FUNC_RETURN);
        assertThat(m.main().body().ops().get(1).attr(StableHlo.FUSION_SLICE_STARTS)).isNull();
    }
}
