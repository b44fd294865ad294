package dev.weft.lowering;

import dev.weft.spi.Primitive;
import static dev.weft.lowering.Ops.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.graph.Graph;
import dev.weft.graph.Var;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoweringRulesTest {
    private static final Aval F4 = Aval.of(DType.F32, 4);

    private static Graph addGraph() {
        GraphBuilder g = new GraphBuilder();
        Var x = g.param(F4);
        return g.graph(g.op(Prims.ADD, x, x));
    }

    private static LoweringRule named(String op) {
        return (ctx, node, in) -> ctx.emit(op, in, LoweringContext.outputTypes(node), Map.of(), List.of()).results();
    }

    @Test
    void targetRuleWinsAndAnyTargetIsTheFallback() {
        LoweringRules rules = new LoweringRules()
                .register(Prims.ADD, LoweringRules.ANY_TARGET, named("test.any_add"))
                .register(Prims.ADD, "gpu", named("test.gpu_add"));
        Lowerer lowerer = new Lowerer(rules);
        assertThat(names(lowerer.lower(addGraph(), TestTarget.CPU))).containsExactly("test.any_add", StableHlo.FUNC_RETURN);
        assertThat(names(lowerer.lower(addGraph(), TestTarget.GPU))).containsExactly("test.gpu_add", StableHlo.FUNC_RETURN);
        assertThat(rules.has(Prims.ADD, TestTarget.CPU)).isTrue();
        assertThat(rules.has(Prims.MUL, TestTarget.CPU)).isFalse();
    }

    @Test
    void missingRuleNamesPrimitiveTargetAndSourceLine() {
        LoweringRules rules = new LoweringRules().register(Prims.ADD, "cpu", named("test.cpu_add"));
        assertThatThrownBy(() -> new Lowerer(rules).lower(addGraph(), TestTarget.GPU))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("'add'")
                .hasMessageContaining("'gpu'")
                .hasMessageStartingWith("Test.java:1:");
    }

    @Test
    void twoRulesForOnePairAreRejected() {
        LoweringRules rules = new LoweringRules().register(Prims.ADD, "cpu", named("a"));
        assertThatThrownBy(() -> rules.register(Prims.ADD, "cpu", named("b")))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void ruleProducingTheWrongTypeIsReportedAtTheNode() {
        LoweringRules rules = new LoweringRules().register(Prims.ADD, "cpu",
                (ctx, node, in) -> List.of(ctx.scalar(DType.F32, 0.0)));
        assertThatThrownBy(() -> new Lowerer(rules).lower(addGraph(), TestTarget.CPU))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("tensor<f32>")
                .hasMessageStartingWith("Test.java:1:");
    }

    @Test
    void discoveredRulesCoverEveryPrimitive() throws IllegalAccessException {
        LoweringRules rules = LoweringRules.discover();
        for (var field : Prims.class.getFields()) {
            if (field.get(null) instanceof Primitive<?> p) {
                assertThat(rules.has(p, TestTarget.CPU)).as(p.name()).isTrue();
                assertThat(rules.has(p, TestTarget.GPU)).as(p.name()).isTrue();
            }
        }
    }

    @Test
    void mainTakesTheGraphParametersAndReturnsItsResults() {
        GraphBuilder g = new GraphBuilder();
        Var x = g.param(F4);
        Var y = g.param(Aval.of(DType.I32, 2));
        Module m = new Lowerer(LoweringRules.discover()).lower(g.graph(y, g.op(Prims.EXP, x)), TestTarget.GPU);
        assertThat(m.target()).isEqualTo(TestTarget.GPU.name());
        assertThat(m.main().name()).isEqualTo("main");
        assertThat(m.main().argumentTypes()).containsExactly(TensorType.of(F4), TensorType.of(DType.I32, 2));
        assertThat(m.main().body().results()).containsExactly(m.main().body().arguments().get(1),
                m.main().body().ops().getFirst().result());
    }
}
