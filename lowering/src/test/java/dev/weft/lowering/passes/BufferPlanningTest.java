package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
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

class BufferPlanningTest {
    private static Attr lastUse(long... indices) {
        return Attr.I64Array.of(indices);
    }

    @Test
    void marksOperandsNotUsedByAnyLaterOp() {
        ModuleBuilder b = new ModuleBuilder(F4, F4);
        Value x = b.arg(0);
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, x);
        Value s = b.op(ElementwiseOp.ADD.mlirName(), F4, a, x);
        Value n = b.op(ElementwiseOp.NEG.mlirName(), F4, a);
        Value twice = b.op(ElementwiseOp.MUL.mlirName(), F4, b.arg(1), b.arg(1));
        Module m = b.module(s, n, twice);

        new BufferPlanning().run(m);

        List<Op> ops = m.main().body().ops();
        assertThat(ops.get(0).attr(StableHlo.LAST_USE)).isEqualTo(lastUse());
        assertThat(ops.get(1).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(1));
        assertThat(ops.get(2).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0));
        assertThat(ops.get(3).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0));
        assertThat(ops.get(4).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0, 1, 2));
        assertThat(ops.get(1).attr(StableHlo.LAST_USE).mlir()).isEqualTo("array<i64: 1>");
    }

    @Test
    void usesInsideRegionsBelongToTheirOpAndOuterValuesAreNotReleasedInside() {
        ModuleBuilder b = new ModuleBuilder(F4, TensorType.of(DType.BOOL));
        Value a = b.op(ElementwiseOp.EXP.mlirName(), F4, b.arg(0));
        Value c = b.op(ElementwiseOp.COS.mlirName(), F4, b.arg(0));
        ModuleBuilder yes = new ModuleBuilder();
        Value inner = yes.op(ElementwiseOp.NEG.mlirName(), F4, a);
        Value inner2 = yes.op(ElementwiseOp.SIN.mlirName(), F4, inner);
        yes.ret(inner2);
        ModuleBuilder no = new ModuleBuilder();
        no.ret(a);
        Op branch = b.op(StableHlo.IF, List.of(b.arg(1)), List.of(F4), Map.of(), List.of(yes.block(), no.block()));
        Value sum = b.op(ElementwiseOp.ADD.mlirName(), F4, branch.result(), c);
        Module m = b.module(sum);

        new BufferPlanning().run(m);

        assertThat(m.main().body().ops().get(0).attr(StableHlo.LAST_USE)).isEqualTo(lastUse());
        assertThat(m.main().body().ops().get(1).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0));
        assertThat(branch.attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0));
        assertThat(m.main().body().ops().get(3).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0, 1));
        assertThat(yes.block().ops().get(0).attr(StableHlo.LAST_USE)).isEqualTo(lastUse());
        assertThat(yes.block().ops().get(1).attr(StableHlo.LAST_USE)).isEqualTo(lastUse(0));
        assertThat(no.block().ops().get(0).attr(StableHlo.LAST_USE)).isEqualTo(lastUse());
    }
}
