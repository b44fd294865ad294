package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.Weft;
import dev.weft.graph.Graph;
import dev.weft.graph.GraphEvaluator;
import dev.weft.spi.Aval;
import dev.weft.testing.TensorAssert;
import dev.weft.tracer.Tracer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link GraphEvaluator} on the eager interpreter: a traced graph computes what its function computes. */
class GraphEvaluatorTest {
    private static List<Tensor> program(List<Tensor> in) {
        Tensor x = in.get(0), w = in.get(1);
        return List.of(Weft.fori(0, 5, x, (i, c) -> Weft.cond(c.sum().gt(1),
                () -> c.mul(w).sin(), () -> c.add(i.cast(DType.F64)).mul(0.5))), x.mul(w));
    }

    @Test
    void aTracedGraphEvaluatedEagerlyEqualsTheFunctionRunEagerly() {
        Tensor x = Tensor.of(new double[] {0.5, -1, 2}), w = Tensor.of(new double[] {1.5, 0.25, -2});
        Aval f3 = Aval.of(DType.F64, 3);
        Graph g = Tracer.trace("program", List.of(f3, f3), GraphEvaluatorTest::program);
        List<Tensor> evaluated = GraphEvaluator.evaluate(g.body(), List.of(x, w));
        List<Tensor> direct = program(List.of(x, w));
        TensorAssert.assertThat(evaluated.get(0)).isEqualTo(direct.get(0));
        TensorAssert.assertThat(evaluated.get(1)).isEqualTo(direct.get(1));
    }

    @Test
    void anErrorWhileAnEagerLoopRunsNamesTheLineOfTheOperationInItsBody() {
        Tensor x = Tensor.of(new int[] {6, 3});
        int line = here(1);
        assertThatThrownBy(() -> Weft.fori(0, 4, x, (i, c) -> c.div(c.sub(1))))
                .isInstanceOf(WeftException.class)
                .hasMessageStartingWith("GraphEvaluatorTest.java:" + line + ":")
                .hasMessageContaining("division by zero");
        assertThat(x.toIntArray()).containsExactly(6, 3);
    }

    private static int here(int offset) {
        return StackWalker.getInstance().walk(f -> f.skip(1).findFirst().orElseThrow().getLineNumber()) + offset;
    }
}
