package dev.weft.lowering;

import static dev.weft.lowering.Ops.names;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CondParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

class ControlFlowLoweringTest {
    private static final Aval F4 = Aval.of(DType.F32, 4);
    private static final Aval I32 = Aval.of(DType.I32);
    private final Lowerer lowerer = new Lowerer(LoweringRules.discover());

    private static int intConstant(Op constant) {
        assertThat(constant.name()).isEqualTo(StableHlo.CONSTANT);
        return ((Attr.Dense) constant.attr("value")).data().get(ValueLayout.JAVA_INT, 0);
    }

    @Test
    void foriBecomesWhileOverIndexCarriesAndCaptures() {
        GraphBuilder g = new GraphBuilder();
        Var x = g.param(F4);
        Var c = g.param(F4);
        GraphBuilder body = g.nested();
        body.param(I32);
        Var carry = body.param(F4);
        Var cap = body.param(F4);
        Region region = body.region(body.op(Prims.ADD, carry, cap));
        Var out = g.node(Prims.FORI, new LoopParams(2, 5, region), List.of(x, c), List.of(F4)).getFirst();
        Module m = lowerer.lower(g.graph(out), TestTarget.CPU);

        Block main = m.main().body();
        assertThat(names(main)).containsExactly(StableHlo.CONSTANT, StableHlo.WHILE, StableHlo.FUNC_RETURN);
        assertThat(intConstant(main.ops().get(0))).isEqualTo(2);
        Op loop = main.ops().get(1);
        assertThat(Attr.CountedLoop.of(loop)).contains(new Attr.CountedLoop(0, 2, 5, 1));
        assertThat(loop.operands()).containsExactly(main.ops().get(0).result(), main.arguments().get(0),
                main.arguments().get(1));
        assertThat(loop.results()).extracting(Value::type).containsExactly(TensorType.of(DType.I32),
                TensorType.of(F4), TensorType.of(F4));
        assertThat(main.results()).containsExactly(loop.results().get(1));
        assertThat(loop.location().line()).isEqualTo(1);

        Block cond = loop.regions().get(0);
        assertThat(cond.arguments()).hasSize(3);
        assertThat(names(cond)).containsExactly(StableHlo.CONSTANT, ElementwiseOp.LT.mlirName(), StableHlo.RETURN);
        assertThat(intConstant(cond.ops().get(0))).isEqualTo(5);
        Op lt = cond.ops().get(1);
        assertThat(lt.operands()).containsExactly(cond.arguments().get(0), cond.ops().get(0).result());
        assertThat(lt.attr("comparison_direction").mlir()).isEqualTo("#stablehlo<comparison_direction LT>");
        assertThat(cond.results()).containsExactly(lt.result());
        assertThat(lt.result().type()).isEqualTo(TensorType.of(DType.BOOL));

        Block step = loop.regions().get(1);
        List<Value> a = step.arguments();
        assertThat(names(step)).containsExactly(ElementwiseOp.ADD.mlirName(), StableHlo.CONSTANT,
                ElementwiseOp.ADD.mlirName(), StableHlo.RETURN);
        Op userAdd = step.ops().get(0);
        assertThat(userAdd.operands()).containsExactly(a.get(1), a.get(2));
        assertThat(userAdd.location().line()).isEqualTo(100);
        assertThat(intConstant(step.ops().get(1))).isEqualTo(1);
        Op increment = step.ops().get(2);
        assertThat(increment.operands()).containsExactly(a.get(0), step.ops().get(1).result());
        assertThat(step.results()).containsExactly(increment.result(), userAdd.result(), a.get(2));
    }

    @Test
    void condBecomesIfWithImplicitCaptures() {
        GraphBuilder g = new GraphBuilder();
        Var pred = g.param(Aval.of(DType.BOOL));
        Var a = g.param(F4);
        GraphBuilder onTrue = g.nested();
        Region t = onTrue.region(onTrue.op(Prims.EXP, onTrue.param(F4)));
        GraphBuilder onFalse = g.nested();
        Var p = onFalse.param(F4);
        Region f = onFalse.region(p);
        Var out = g.node(Prims.COND, new CondParams(t, f), List.of(pred, a), List.of(F4)).getFirst();
        Module m = lowerer.lower(g.graph(out), TestTarget.CPU);

        Block main = m.main().body();
        assertThat(names(main)).containsExactly(StableHlo.IF, StableHlo.FUNC_RETURN);
        Op branch = main.ops().getFirst();
        assertThat(branch.operands()).containsExactly(main.arguments().get(0));
        assertThat(branch.result().type()).isEqualTo(TensorType.of(F4));
        Block yes = branch.regions().get(0);
        Block no = branch.regions().get(1);
        assertThat(yes.arguments()).isEmpty();
        assertThat(no.arguments()).isEmpty();
        assertThat(names(yes)).containsExactly(ElementwiseOp.EXP.mlirName(), StableHlo.RETURN);
        assertThat(yes.ops().getFirst().operands()).containsExactly(main.arguments().get(1));
        assertThat(yes.results()).containsExactly(yes.ops().getFirst().result());
        assertThat(names(no)).containsExactly(StableHlo.RETURN);
        assertThat(no.results()).containsExactly(main.arguments().get(1));
        assertThat(main.results()).containsExactly(branch.result());
    }
}
