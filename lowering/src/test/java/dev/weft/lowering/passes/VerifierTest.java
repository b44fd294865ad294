package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static dev.weft.lowering.passes.ModuleBuilder.F8;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VerifierTest {
    private static void verify(Module m) {
        new Verifier().run(m);
    }

    @Test
    void acceptsAWellFormedModule() {
        ModuleBuilder b = new ModuleBuilder(F4);
        assertThatCode(() -> verify(b.module(b.op(StableHlo.EXP, F4, b.arg(0))))).doesNotThrowAnyException();
    }

    @Test
    void rejectsUseBeforeDefinitionAtTheOpsLine() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Op first = b.op(StableHlo.NEGATE, List.of(b.arg(0)), List.of(F4), Map.of(), List.of());
        Value later = b.op(StableHlo.EXP, F4, b.arg(0));
        first.operands().set(0, later);
        assertThatThrownBy(() -> verify(b.module(first.result())))
                .isInstanceOf(WeftException.class)
                .hasMessageStartingWith("Test.java:1: verify: stablehlo.negate")
                .hasMessageContaining("not defined before its use");
    }

    @Test
    void rejectsValuesOfSiblingOrInnerBlocks() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.BOOL));
        ModuleBuilder yes = new ModuleBuilder();
        Value inner = yes.op(StableHlo.EXP, F4, b.arg(0));
        yes.ret(inner);
        ModuleBuilder no = new ModuleBuilder();
        no.ret(inner);
        Op branch = b.op(StableHlo.IF, List.of(b.arg(1)), List.of(F4), Map.of(), List.of(yes.block(), no.block()));
        assertThatThrownBy(() -> verify(b.module(branch.result()))).isInstanceOf(WeftException.class)
                .hasMessageContaining("stablehlo.return");
    }

    @Test
    void rejectsMissingTerminator() {
        ModuleBuilder b = new ModuleBuilder(F4);
        b.op(StableHlo.EXP, F4, b.arg(0));
        Module m = new Module("cpu", List.of(new Func("main", b.block())));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("does not end in func.return");
    }

    @Test
    void rejectsElementwiseShapeMismatch() {
        ModuleBuilder b = new ModuleBuilder(F4, F8);
        Value bad = b.op(StableHlo.ADD, F4, b.arg(0), b.arg(1));
        assertThatThrownBy(() -> verify(b.module(bad))).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("Test.java:1: verify: stablehlo.add")
                .hasMessageContaining("tensor<8xf32>");
    }

    @Test
    void rejectsRegionResultsThatDoNotMatchTheOp() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.BOOL));
        ModuleBuilder yes = new ModuleBuilder();
        yes.ret(b.arg(0));
        ModuleBuilder no = new ModuleBuilder();
        no.ret(b.arg(1));
        Op branch = b.op(StableHlo.IF, List.of(b.arg(1)), List.of(F4), Map.of(), List.of(yes.block(), no.block()));
        assertThatThrownBy(() -> verify(b.module(branch.result()))).isInstanceOf(WeftException.class)
                .hasMessageContaining("region 1");
    }

    @Test
    void rejectsAFusionViewOutsideItsOperand() {
        ModuleBuilder b = new ModuleBuilder(F8);
        Block region = Block.withArgs(List.of(F4));
        region.ops().add(new Op(StableHlo.RETURN, List.of(region.arguments().getFirst()), List.of(), Map.of(),
                List.of(), new SourceLocation("Test", "body", "Test.java", 1)));
        Op fusion = b.op(StableHlo.FUSION, List.of(b.arg(0)), List.of(F4),
                Map.of(StableHlo.FUSION_SLICE_STARTS, new Attr.Array(List.of(Attr.I64Array.of(5L)))),
                List.of(region));
        assertThatThrownBy(() -> verify(b.module(fusion.result())))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("fusion view tensor<4xf32> at [5] does not lie inside operand tensor<8xf32>");
    }
}
