package dev.weft.lowering.passes;

import dev.weft.DType;
import static dev.weft.lowering.Ops.names;
import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CommonSubexpressionEliminationTest {
    @Test
    void mergesEqualPureOpsAndRewritesUses() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Value c1 = b.constant(2);
        Value c2 = b.constant(2);
        Value c3 = b.constant(3);
        Value e1 = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value e2 = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, e1, e2);
        Module m = b.module(s, e2);

        new CommonSubexpressionElimination().run(m);

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.CONSTANT, ElementwiseOp.EXP.mlirName(),
                ElementwiseOp.ADD.mlirName(),
                StableHlo.FUNC_RETURN);
        assertThat(m.main().body().ops().get(0).result()).isSameAs(c1);
        assertThat(m.main().body().ops().get(1).result()).isSameAs(c3);
        assertThat(m.main().body().ops().get(3).operands()).containsExactly(e1, e1);
        assertThat(m.main().body().results()).containsExactly(s, e1);
        assertThat(c2).isNotSameAs(c1);
    }

    @Test
    void differentAttributesOrOperandsAreNotMerged() {
        ModuleBuilder b = new ModuleBuilder(F4, F4);
        TensorType bool = TensorType.of(DType.BOOL, 4);
        Value lt = b.op(ElementwiseOp.LT.mlirName(), List.of(b.arg(0), b.arg(1)), List.of(bool),
                Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", "LT")), List.of())
                .result();
        Value gt = b.op(ElementwiseOp.LT.mlirName(), List.of(b.arg(0), b.arg(1)), List.of(bool),
                Map.of("comparison_direction", new Attr.Enum("stablehlo", "comparison_direction", "GT")), List.of())
                .result();
        Value swapped = b.op(ElementwiseOp.SUB.mlirName(), F4, b.arg(1), b.arg(0));
        Value sub = b.op(ElementwiseOp.SUB.mlirName(), F4, b.arg(0), b.arg(1));
        Module m = b.module(lt, gt, swapped, sub);

        new CommonSubexpressionElimination().run(m);

        assertThat(m.main().body().ops()).hasSize(5);
    }

    @Test
    void neverMergesCustomCalls() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Op first = b.effect(b.arg(0));
        Op second = b.effect(b.arg(0));
        Module m = b.module(first.result(), second.result());

        new CommonSubexpressionElimination().run(m);

        assertThat(m.main().body().ops()).containsExactly(first, second, m.main().body().terminator());
    }

    @Test
    void mergesInsideNestedBlocksUsingOuterValues() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.BOOL));
        Value outer = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        ModuleBuilder yes = new ModuleBuilder();
        Value n1 = yes.op(ElementwiseOp.NEG.mlirName(), F4, outer);
        Value n2 = yes.op(ElementwiseOp.NEG.mlirName(), F4, outer);
        yes.ret(yes.op(ElementwiseOp.ADD.mlirName(), F4, n1, n2));
        ModuleBuilder no = new ModuleBuilder();
        no.ret(outer);
        Op branch = b.op(StableHlo.IF, List.of(b.arg(1)), List.of(F4), Map.of(), List.of(yes.block(), no.block()));
        Value dup = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Module m = b.module(branch.result(), dup);

        new CommonSubexpressionElimination().run(m);

        assertThat(names(yes.block())).containsExactly(ElementwiseOp.NEG.mlirName(), ElementwiseOp.ADD.mlirName(),
                StableHlo.RETURN);
        assertThat(yes.block().ops().get(1).operands()).containsExactly(n1, n1);
        assertThat(names(m)).containsExactly(ElementwiseOp.EXP.mlirName(), StableHlo.IF, StableHlo.FUNC_RETURN);
        assertThat(m.main().body().results()).containsExactly(branch.result(), outer);
    }
}
