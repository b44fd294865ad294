package org.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CondParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.IotaParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.tracer.Tracer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Graphs recorded by {@link Tracer#trace}: nodes, constants, and closed fori/cond regions. */
class TracerTest {
    private static final Aval F32_3 = Aval.of(DType.F32, 3);
    private static final Aval SCALAR_BOOL = Aval.of(DType.BOOL);

    @Test
    void recordsOneNodePerOperationWithFreshOutputsAndLocations() {
        int line = Lines.here(1);
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(in.get(0).add(in.get(1)).mul(in.get(0))));
        Region body = g.body();
        assertThat(body.params()).extracting(Var::aval).containsExactly(F32_3, F32_3);
        assertThat(body.nodes()).extracting(Node::prim).containsExactly(Prims.ADD, Prims.MUL);
        Node add = body.nodes().get(0), mul = body.nodes().get(1);
        assertThat(add.inputs()).containsExactlyElementsOf(body.params());
        assertThat(mul.inputs()).containsExactly(add.outputs().getFirst(), body.params().getFirst());
        assertThat(body.results()).containsExactly(mul.outputs().getFirst());
        assertThat(mul.outputs().getFirst().aval()).isEqualTo(F32_3);
        assertThat(add.location().file()).isEqualTo("TracerTest.java");
        assertThat(add.location().line()).isEqualTo(line);
    }

    @Test
    void liftsEachConcreteTensorOncePerRegion() {
        Tensor c = Tensor.of(new float[] {1, 2, 3});
        Graph g = Tracer.trace("f", List.of(F32_3), in -> List.of(in.get(0).add(c).mul(c)));
        List<Node> nodes = g.body().nodes();
        assertThat(nodes).extracting(Node::prim).containsExactly(Prims.CONSTANT, Prims.ADD, Prims.MUL);
        Node constant = nodes.getFirst();
        assertThat(((ConstantParams) constant.params()).value()).isSameAs(c);
        assertThat(constant.inputs()).isEmpty();
        assertThat(nodes.get(1).inputs().get(1)).isSameAs(constant.outputs().getFirst());
        assertThat(nodes.get(2).inputs().get(1)).isSameAs(constant.outputs().getFirst());
    }

    @Test
    void liftsAScalarOperandAndBroadcastsIt() {
        Graph g = Tracer.trace("f", List.of(F32_3), in -> List.of(in.get(0).mul(2.0)));
        List<Node> nodes = g.body().nodes();
        assertThat(nodes).extracting(Node::prim).containsExactly(Prims.CONSTANT, Prims.BROADCAST_IN_DIM, Prims.MUL);
        Tensor two = ((ConstantParams) nodes.getFirst().params()).value();
        assertThat(two.shape()).isEmpty();
        assertThat(two.toFloatArray()).containsExactly(2f);
        assertThat(nodes.get(1).outputs().getFirst().aval()).isEqualTo(F32_3);
    }

    @Test
    void resultsMayBeParametersOrConstants() {
        Tensor c = Tensor.of(new float[] {4, 5, 6});
        Graph g = Tracer.trace("f", List.of(F32_3), in -> List.of(in.get(0), c));
        Region body = g.body();
        assertThat(body.nodes()).extracting(Node::prim).containsExactly(Prims.CONSTANT);
        assertThat(body.results()).containsExactly(body.params().getFirst(),
                body.nodes().getFirst().outputs().getFirst());
    }

    @Test
    void recordsNullaryPrimitives() {
        Graph g = Tracer.trace("f", List.of(), in -> List.of(Tensor.arange(DType.I32, 4)));
        Node iota = g.body().nodes().getFirst();
        assertThat(iota.prim()).isSameAs(Prims.IOTA);
        assertThat(iota.params()).isEqualTo(new IotaParams(DType.I32, 4));
        assertThat(g.body().results()).containsExactly(iota.outputs().getFirst());
    }

    @Test
    void foriCapturesAnOuterValueAsRegionParameterAndNodeInput() {
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> {
            Tensor y = in.get(1).mul(in.get(1));
            return List.of(Weft.fori(2, 7, in.get(0), (i, c) -> c.add(y)));
        });
        Region body = g.body();
        assertThat(body.nodes()).extracting(Node::prim).containsExactly(Prims.MUL, Prims.FORI);
        Var y = body.nodes().get(0).outputs().getFirst();
        Node loop = body.nodes().get(1);
        assertThat(loop.params()).isEqualTo(new LoopParams(2, 7, loop.regions().getFirst()));
        assertThat(loop.inputs()).containsExactly(body.params().get(0), y);
        assertThat(loop.outputs()).extracting(Var::aval).containsExactly(F32_3);
        assertThat(body.results()).containsExactly(loop.outputs().getFirst());

        Region r = loop.regions().getFirst();
        assertThat(r.params()).extracting(Var::aval).containsExactly(Aval.of(DType.I32), F32_3, F32_3);
        Var carry = r.params().get(1), captured = r.params().get(2);
        assertThat(captured).isNotSameAs(y);
        Node add = r.nodes().getFirst();
        assertThat(r.nodes()).hasSize(1);
        assertThat(add.inputs()).containsExactly(carry, captured);
        assertThat(r.results()).containsExactly(add.outputs().getFirst());
    }

    @Test
    void captureOfAnOuterValueIsPropagatedThroughEveryEnclosingLoop() {
        Graph g = Tracer.trace("f", List.of(F32_3, F32_3), in -> List.of(Weft.fori(0, 2, in.get(0),
                (i, c) -> Weft.fori(0, 3, c, (j, d) -> d.add(in.get(1))))));
        Node outer = g.body().nodes().getFirst();
        assertThat(outer.inputs()).containsExactlyElementsOf(g.body().params());
        Region outerBody = outer.regions().getFirst();
        Var outerCapture = outerBody.params().get(2);
        Node inner = outerBody.nodes().getFirst();
        assertThat(inner.inputs()).containsExactly(outerBody.params().get(1), outerCapture);
        Region innerBody = inner.regions().getFirst();
        assertThat(innerBody.nodes().getFirst().inputs()).containsExactly(innerBody.params().get(1),
                innerBody.params().get(2));
    }

    @Test
    void foriInsideCondSharesOneCaptureListBetweenBranches() {
        Aval scalar = Aval.of(DType.F32, 3);
        Graph g = Tracer.trace("f", List.of(SCALAR_BOOL, scalar, scalar), in -> {
            Tensor p = in.get(0), x = in.get(1), w = in.get(2);
            return List.of(Weft.cond(p, () -> Weft.fori(0, 4, x, (i, c) -> c.mul(w)), () -> w));
        });
        Region body = g.body();
        Node cond = body.nodes().getFirst();
        assertThat(cond.prim()).isSameAs(Prims.COND);
        assertThat(cond.params()).isInstanceOf(CondParams.class);
        assertThat(cond.inputs()).containsExactly(body.params().get(0), body.params().get(1), body.params().get(2));
        assertThat(cond.outputs()).extracting(Var::aval).containsExactly(scalar);

        Region onTrue = cond.regions().get(0), onFalse = cond.regions().get(1);
        assertThat(onTrue.params()).hasSize(2);
        assertThat(onFalse.params()).hasSize(2);
        Node loop = onTrue.nodes().getFirst();
        assertThat(loop.prim()).isSameAs(Prims.FORI);
        assertThat(loop.inputs()).containsExactly(onTrue.params().get(0), onTrue.params().get(1));
        Region loopBody = loop.regions().getFirst();
        assertThat(loopBody.nodes().getFirst().inputs()).containsExactly(loopBody.params().get(1),
                loopBody.params().get(2));
        assertThat(onTrue.results()).containsExactly(loop.outputs().getFirst());
        assertThat(onFalse.nodes()).isEmpty();
        assertThat(onFalse.results()).containsExactly(onFalse.params().get(1));
    }

    @Test
    void aFalseBranchCapturingWhatTheTrueBranchDoesNotGetsAnUnusedParameter() {
        Graph g = Tracer.trace("f", List.of(SCALAR_BOOL, F32_3, F32_3), in -> List.of(Weft.cond(in.get(0),
                () -> in.get(1), () -> in.get(2))));
        Node cond = g.body().nodes().getFirst();
        assertThat(cond.inputs()).containsExactlyElementsOf(g.body().params());
        Region onTrue = cond.regions().get(0), onFalse = cond.regions().get(1);
        assertThat(onTrue.results()).containsExactly(onTrue.params().get(0));
        assertThat(onFalse.results()).containsExactly(onFalse.params().get(1));
    }

    @Test
    void aCarryOfAnotherDtypeIsAnErrorAtTheLoop() {
        int line = Lines.here(2);
        assertThatThrownBy(() -> Tracer.trace("f", List.of(F32_3), in -> List.of(
                Weft.fori(0, 2, in.get(0), (i, c) -> c.cast(DType.F64)))))
                .isInstanceOf(DTypeException.class)
                .hasMessageStartingWith("TracerTest.java:" + line + ": fori: the body returns carry 0 as f64[3]")
                .hasMessageContaining("f32[3]");
    }

    @Test
    void aCarryOfAnotherShapeIsAnErrorAtTheLoop() {
        int line = Lines.here(2);
        assertThatThrownBy(() -> Tracer.trace("f", List.of(F32_3), in -> List.of(
                Weft.fori(0, 2, in.get(0), (i, c) -> c.sum()))))
                .isInstanceOf(ShapeException.class)
                .hasMessageStartingWith("TracerTest.java:" + line + ": fori:");
    }

    @Test
    void branchesOfDifferentAvalsAreAnErrorAtTheCond() {
        int line = Lines.here(2);
        assertThatThrownBy(() -> Tracer.trace("f", List.of(SCALAR_BOOL, F32_3), in -> List.of(
                Weft.cond(in.get(0), () -> in.get(1), () -> in.get(1).sum()))))
                .isInstanceOf(ShapeException.class)
                .hasMessageStartingWith("TracerTest.java:" + line + ": cond: the false branch returns f32[]");
    }

    @Test
    void aNonScalarPredicateIsAnError() {
        assertThatThrownBy(() -> Tracer.trace("f", List.of(Aval.of(DType.BOOL, 3), F32_3), in -> List.of(
                Weft.cond(in.get(0), () -> in.get(1), () -> in.get(1)))))
                .isInstanceOf(ShapeException.class)
                .hasMessageContaining("predicate must be a scalar");
    }

    @Test
    void aValueKeptFromALoopBodyCannotBeUsedAfterTheLoop() {
        Tensor[] kept = new Tensor[1];
        int line = Lines.here(3);
        assertThatThrownBy(() -> Tracer.trace("f", List.of(F32_3), in -> {
            Weft.fori(0, 2, in.get(0), (i, c) -> kept[0] = c.add(c));
            return List.of(in.get(0).add(kept[0]));
        }))
                .isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("TracerTest.java:" + line + ":")
                .hasMessageContaining("outside the fori body or cond branch");
    }

    @Test
    void aValueKeptFromAFinishedTraceCannotBeUsedInAnother() {
        Tensor[] kept = new Tensor[1];
        Tracer.trace("first", List.of(F32_3), in -> List.of(kept[0] = in.get(0).add(in.get(0))));
        assertThatThrownBy(() -> Tracer.trace("second", List.of(F32_3), in -> List.of(in.get(0).add(kept[0]))))
                .isInstanceOf(TracedValueException.class)
                .hasMessageContaining("after its trace ended");
    }

    @Test
    void readingATracedValueNamesTheLine() {
        int line = Lines.here(1);
        assertThatThrownBy(() -> Tracer.trace("f", List.of(F32_3), in -> List.of(Tensor.full(DType.F32, in.get(0).sum().item(), 3))))
                .isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("TracerTest.java:" + line + ": item()");
    }
}
