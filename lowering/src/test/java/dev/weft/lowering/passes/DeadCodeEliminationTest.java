package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.lowering.ir.TensorType;
import static dev.weft.lowering.Ops.names;
import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeadCodeEliminationTest {
    @Test
    void removesUnusedPureChainsButKeepsEffects() {
        ModuleBuilder b = new ModuleBuilder(F4, TokenType.INSTANCE);
        Value x = b.arg(0);
        Value dead1 = b.op(ElementwiseOp.EXP.mlirName(), F4, x);
        b.op(ElementwiseOp.NEG.mlirName(), F4, dead1);
        Op send = b.send(x, b.arg(1));
        Op barrier = b.effect(x);
        Value live = b.op(ElementwiseOp.ADD.mlirName(), F4, x, x);
        Module m = b.module(live);

        new DeadCodeElimination().run(m);

        assertThat(m.main().body().ops().subList(0, 2)).containsExactly(send, barrier);
        assertThat(m.main().body().results()).containsExactly(live);
        assertThat(names(m)).containsExactly(StableHlo.CUSTOM_CALL, StableHlo.CUSTOM_CALL, ElementwiseOp.ADD.mlirName(),
                StableHlo.FUNC_RETURN);
    }

    @Test
    void keepsRegionOpsContainingEffectsAndCleansInsideRegions() {
        ModuleBuilder b = new ModuleBuilder(F4, TokenType.INSTANCE);
        ModuleBuilder effectful = new ModuleBuilder();
        effectful.effect(b.arg(0));
        effectful.ret(b.arg(0));
        ModuleBuilder pure = new ModuleBuilder();
        pure.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value kept = pure.op(ElementwiseOp.NEG.mlirName(), F4, b.arg(0));
        pure.ret(kept);
        Value pred = b.op(ElementwiseOp.LT.mlirName(), TensorType.of(DType.BOOL), b.constant(1),
                b.constant(2));
        b.op(StableHlo.IF, List.of(pred), List.of(F4), Map.of(), List.of(effectful.block(), pure.block()));
        ModuleBuilder unusedPure = new ModuleBuilder();
        unusedPure.ret(unusedPure.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0)));
        ModuleBuilder other = new ModuleBuilder();
        other.ret(b.arg(0));
        b.op(StableHlo.IF, List.of(pred), List.of(F4), Map.of(), List.of(unusedPure.block(), other.block()));
        Module m = b.module(b.arg(0));

        new DeadCodeElimination().run(m);

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.CONSTANT, ElementwiseOp.LT.mlirName(),
                StableHlo.IF,
                StableHlo.FUNC_RETURN);
        Op kept1 = m.main().body().ops().get(3);
        assertThat(names(kept1.regions().get(0))).containsExactly(StableHlo.CUSTOM_CALL, StableHlo.RETURN);
        assertThat(names(kept1.regions().get(1))).containsExactly(ElementwiseOp.NEG.mlirName(), StableHlo.RETURN);
    }

    @Test
    void keepsTokenOpsEvenWithoutSideEffectFlag() {
        ModuleBuilder b = new ModuleBuilder(TokenType.INSTANCE);
        b.op("stablehlo.after_all", TokenType.INSTANCE, b.arg(0));
        Module m = b.module();
        new DeadCodeElimination().run(m);
        assertThat(names(m)).containsExactly("stablehlo.after_all", StableHlo.FUNC_RETURN);
    }
}
