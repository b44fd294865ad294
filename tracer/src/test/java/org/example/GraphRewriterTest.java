package org.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.graph.Graph;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.GraphRewriter;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.tracer.Tracer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link GraphRewriter} and {@link GraphEvaluator} on traced graphs, and the folding of control flow with a known
 * outcome that {@link Tracer#trace} applies with them.
 */
class GraphRewriterTest {
    private static final Aval F32_3 = Aval.of(DType.F32, 3);
    private static final GraphRewriter.Rule MUL_TO_SUB = (n, in) -> n.prim() == Prims.MUL
            ? List.of(in.get(0).sub(in.get(1))) : null;

    @Test
    void replacesANodeAtItsLineAndKeepsTheOthers() {
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(in.get(0).mul(in.get(1)).add(in.get(0))));
        Node mul = g.body().nodes().get(0), add = g.body().nodes().get(1);
        Graph r = GraphRewriter.rewrite(g, MUL_TO_SUB);
        assertThat(r.name()).isEqualTo("f");
        Region body = r.body();
        assertThat(body.params()).extracting(Var::aval).containsExactly(F32_3, F32_3);
        assertThat(body.nodes()).extracting(Node::prim).containsExactly(Prims.SUB, Prims.ADD);
        Node sub = body.nodes().get(0), add2 = body.nodes().get(1);
        assertThat(sub.inputs()).containsExactlyElementsOf(body.params());
        assertThat(add2.inputs()).containsExactly(sub.outputs().getFirst(), body.params().getFirst());
        assertThat(body.results()).containsExactly(add2.outputs().getFirst());
        assertThat(sub.location()).isEqualTo(mul.location());
        assertThat(add2.location()).isEqualTo(add.location());
    }

    @Test
    void rewritesNestedRegionsAndKeepsThemClosed() {
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(Weft.fori(0, 4, in.get(0),
                (i, c) -> Weft.cond(c.sum().gt(0), () -> c.mul(in.get(1)), () -> c))));
        Region body = GraphRewriter.rewrite(g, MUL_TO_SUB).body();
        Node loop = body.nodes().getFirst();
        assertThat(loop.prim()).isSameAs(Prims.FORI);
        assertThat(loop.inputs()).containsExactlyElementsOf(body.params());
        Region loopBody = loop.regions().getFirst();
        assertThat(loopBody.params()).extracting(Var::aval).containsExactly(Aval.of(DType.I32), F32_3, F32_3);
        Node cond = loopBody.nodes().get(loopBody.nodes().size() - 1);
        assertThat(cond.prim()).isSameAs(Prims.COND);
        Region onTrue = cond.regions().getFirst();
        assertThat(onTrue.nodes()).extracting(Node::prim).containsExactly(Prims.SUB);
        assertThat(onTrue.nodes().getFirst().inputs()).containsExactlyElementsOf(onTrue.params());
        assertThat(cond.inputs().subList(1, 3)).containsExactly(loopBody.params().get(1), loopBody.params().get(2));
    }

    @Test
    void aRuleThatUsesAValueFromOutsideTheRegionIsRefused() {
        Tensor[] outside = new Tensor[1];
        Tracer.trace("f", List.of(F32_3), in -> {
            Graph inner = Tracer.trace("g", List.of(F32_3), x -> List.of(x.getFirst().mul(x.getFirst())));
            outside[0] = in.getFirst();
            assertThatThrownBy(() -> GraphRewriter.rewrite(inner, (n, args) -> List.of(outside[0])))
                    .isInstanceOf(IllegalStateException.class);
            return in;
        });
    }

    @Test
    void evaluatingARegionInATraceRecordsItAgainAtItsLines() {
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(Weft.fori(0, 3, in.get(0),
                (i, c) -> c.mul(in.get(1)))));
        Graph again = Tracer.trace("f", List.of(F32_3, F32_3), in -> GraphEvaluator.evaluate(g.body(), in));
        Node loop = g.body().nodes().getFirst(), loop2 = again.body().nodes().getFirst();
        assertThat(again.body().nodes()).extracting(Node::prim).containsExactly(Prims.FORI);
        assertThat(loop2.location()).isEqualTo(loop.location());
        assertThat(loop2.params()).isSameAs(loop.params());
        assertThat(loop2.inputs()).containsExactlyElementsOf(again.body().params());
    }

    @Test
    void aCondOnAConcretePredicateIsTheBranchItPicks() {
        Tensor yes = Tensor.scalar(DType.BOOL, 1);
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(Weft.cond(yes,
                () -> in.get(0).mul(in.get(1)), () -> in.get(0).neg())));
        assertThat(g.body().nodes()).extracting(Node::prim).containsExactly(Prims.MUL);
        assertThat(g.body().nodes().getFirst().inputs()).containsExactlyElementsOf(g.body().params());
    }

    @Test
    void aLoopOfNoIterationIsItsInitialCarries() {
        Graph g = Tracer.trace("f", List.of(F32_3), in -> List.of(Weft.fori(3, 3, in.getFirst(), (i, c) -> c.neg())));
        assertThat(g.body().nodes()).isEmpty();
        assertThat(g.body().results()).containsExactlyElementsOf(g.body().params());
    }
}
