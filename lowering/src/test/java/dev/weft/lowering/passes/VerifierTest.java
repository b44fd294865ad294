package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static dev.weft.lowering.passes.ModuleBuilder.F8;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.lowering.TestTarget;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.FusionPiece;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.SourceLocation;
import java.util.Arrays;
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
        assertThatCode(() -> verify(b.module(b.op(ElementwiseOp.EXP.mlirName(), F4,
                b.arg(0))))).doesNotThrowAnyException();
    }

    @Test
    void rejectsUseBeforeDefinitionAtTheOpsLine() {
        ModuleBuilder b = new ModuleBuilder(F4);
        Op first = b.op(ElementwiseOp.NEG.mlirName(), List.of(b.arg(0)), List.of(F4), Map.of(), List.of());
        Value later = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
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
        Value inner = yes.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
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
        b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Module m = new Module(TestTarget.CPU.name(), List.of(new Func("main", b.block())));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("does not end in func.return");
    }

    @Test
    void rejectsElementwiseShapeMismatch() {
        ModuleBuilder b = new ModuleBuilder(F4, F8);
        Value bad = b.op(ElementwiseOp.ADD.mlirName(), F4, b.arg(0), b.arg(1));
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

    /** A while over {@code (types...)} that returns its carries, marked as counting carry {@code counter}. */
    private static Module countedLoop(int counter, long step, Type... types) {
        ModuleBuilder b = new ModuleBuilder(types);
        ModuleBuilder cond = new ModuleBuilder(types);
        Value zero = cond.constant(0);
        cond.ret(cond.op("stablehlo.compare", TensorType.of(DType.BOOL), zero, zero));
        ModuleBuilder body = new ModuleBuilder(types);
        body.ret(body.block().arguments().toArray(Value[]::new));
        Op loop = b.op(StableHlo.WHILE, b.block().arguments(), List.of(types),
                Map.of(Attr.CountedLoop.KEY, new Attr.CountedLoop(counter, 0, 4, step)),
                List.of(cond.block(), body.block()));
        return b.module(loop.results().getFirst());
    }

    @Test
    void aCountedLoopsCounterIsAScalarIntegerSteppingForward() {
        TensorType i32 = TensorType.of(DType.I32);
        assertThatCode(() -> verify(countedLoop(0, 1, i32, F4))).doesNotThrowAnyException();
        assertThatCode(() -> verify(countedLoop(1, 3, F4, TensorType.of(DType.I64)))).doesNotThrowAnyException();
        for (Module bad : List.of(countedLoop(1, 1, i32, F4), countedLoop(0, 0, i32, F4), countedLoop(2, 1, i32, F4),
                countedLoop(0, 1, TensorType.of(DType.I32, 1), F4))) {
            assertThatThrownBy(() -> verify(bad)).isInstanceOf(WeftException.class)
                    .hasMessageContaining("verify: stablehlo.while").hasMessageContaining("counted loop");
        }
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
    /** A fusion of {@code operands} whose region takes one f32[2,4] argument built from {@code pieces}. */
    private static Module piecewise(ModuleBuilder b, List<Value> operands, FusionPiece... pieces) {
        TensorType grid = TensorType.of(DType.F32, 2, 4);
        Block region = Block.withArgs(List.of(grid));
        region.ops().add(new Op(StableHlo.RETURN, List.of(region.arguments().getFirst()), List.of(), Map.of(),
                List.of(), new SourceLocation("Test", "body", "Test.java", 1)));
        Attr boxes = new Attr.Array(Arrays.stream(pieces).map(p -> (Attr) p.attr()).toList());
        Op fusion = b.op(StableHlo.FUSION, operands, List.of(grid),
                Map.of(StableHlo.FUSION_PIECES, new Attr.Array(List.of(boxes))), List.of(region));
        return b.module(fusion.result());
    }

    private static FusionPiece box(int operand, long[] at, long[] from, long[] size) {
        return new FusionPiece(operand, at, from, size);
    }

    private static long[] ix(long... v) {
        return v;
    }

    @Test
    void acceptsPiecesThatCoverTheArgumentOnce() {
        ModuleBuilder b = new ModuleBuilder(F8, TensorType.of(DType.F32, 3, 4));
        Value fill = b.constant(1f);
        Module m = piecewise(b, List.of(b.arg(1), fill), box(0, ix(0, 1), ix(1, 0), ix(2, 3)),
                box(1, ix(0, 0), ix(), ix(2, 1)));
        assertThatCode(() -> verify(m)).doesNotThrowAnyException();
    }

    @Test
    void rejectsOverlappingPieces() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 3, 4));
        Value fill = b.constant(1f);
        Module m = piecewise(b, List.of(b.arg(0), fill), box(0, ix(0, 0), ix(0, 0), ix(2, 2)),
                box(1, ix(1, 1), ix(), ix(1, 3)), box(1, ix(0, 2), ix(), ix(1, 2)));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("piece of operand 1 at [1, 1] from [] size [1, 3] overlaps piece of operand 0");
    }

    @Test
    void rejectsPiecesThatLeaveAGap() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 3, 4));
        Module m = piecewise(b, List.of(b.arg(0)), box(0, ix(0, 0), ix(1, 0), ix(2, 3)));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("its pieces cover 6 of its 8 elements");
    }

    @Test
    void rejectsAPieceOutsideItsOperand() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 3, 4));
        Module m = piecewise(b, List.of(b.arg(0)), box(0, ix(0, 0), ix(2, 0), ix(2, 4)));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("piece of operand 0 at [0, 0] from [2, 0] size [2, 4] does not fit it and "
                        + "operand tensor<3x4xf32>");
    }

    @Test
    void rejectsAFirstPieceThatDoesNotReadItsOwnOperand() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 3, 4));
        Module m = piecewise(b, List.of(b.arg(0), b.arg(0)), box(1, ix(0, 0), ix(0, 0), ix(2, 4)));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("piece 0 must be a box of operand 0");
    }

    @Test
    void rejectsAnOperandThatNoPieceReads() {
        ModuleBuilder b = new ModuleBuilder(TensorType.of(DType.F32, 3, 4));
        Module m = piecewise(b, List.of(b.arg(0), b.arg(0)), box(0, ix(0, 0), ix(0, 0), ix(2, 4)));
        assertThatThrownBy(() -> verify(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("fusion operand 1 is neither a region argument nor read by a piece");
    }
}
