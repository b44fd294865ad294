package org.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.prim.Prims;
import dev.weft.tracer.CompileGate;
import dev.weft.tracer.GraphEvaluatingPipeline;
import dev.weft.tracer.agent.WeftAgent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code @Compile} calls through the agent and {@link CompileGate}, run by {@link GraphEvaluatingPipeline}. */
class CompileGateTest {
    @BeforeAll
    static void installAgent() {
        Kernels.class.getName();
        WeftAgent.install();
        WeftAgent.install();
    }

    private static Tensor f32(float... values) {
        return Tensor.of(values);
    }

    @Test
    void staticMethodRunsTheCompiledGraph() {
        Tensor r = Kernels.axpy(f32(2, 3), f32(10, 20), f32(1, 1));
        assertThat(r.toFloatArray()).containsExactly(21f, 61f);
    }

    @Test
    void bodyRunsOncePerSignature() {
        int before = Kernels.AXPY_BODY.get();
        float[] out = new float[3];
        for (int k = 0; k < 5; k++) {
            Tensor r = Kernels.axpy(f32(k, k, k), f32(1, 2, 3), f32(0, 0, 1));
            out = r.toFloatArray();
        }
        assertThat(out).containsExactly(4f, 8f, 13f);
        assertThat(Kernels.AXPY_BODY.get() - before).isEqualTo(1);
        Kernels.axpy(Tensor.of(new float[] {1, 2, 3, 4}, 2, 2), Tensor.of(new float[] {1, 1, 1, 1}, 2, 2),
                Tensor.of(new float[] {0, 0, 0, 0}, 2, 2));
        Kernels.axpy(Tensor.of(new float[] {1, 2, 3, 4}, 2, 2), Tensor.of(new float[] {2, 2, 2, 2}, 2, 2),
                Tensor.of(new float[] {0, 0, 0, 0}, 2, 2));
        assertThat(Kernels.AXPY_BODY.get() - before).isEqualTo(2);
    }

    @Test
    void aConstantArgumentIsPartOfTheKey() {
        int before = Kernels.SCALE_BODY.get();
        assertThat(Kernels.scale(f32(1, 2), 3f).toFloatArray()).containsExactly(3f, 6f);
        assertThat(Kernels.scale(f32(5, 6), 3f).toFloatArray()).containsExactly(15f, 18f);
        assertThat(Kernels.SCALE_BODY.get() - before).isEqualTo(1);
        assertThat(Kernels.scale(f32(5, 6), 0.5f).toFloatArray()).containsExactly(2.5f, 3f);
        assertThat(Kernels.SCALE_BODY.get() - before).isEqualTo(2);
    }

    @Test
    void instanceMethodsAreKeyedByReceiver() {
        Kernels twice = new Kernels(2), thrice = new Kernels(3);
        assertThat(twice.scaled(f32(1, 2)).toFloatArray()).containsExactly(2f, 4f);
        assertThat(thrice.scaled(f32(1, 2)).toFloatArray()).containsExactly(3f, 6f);
        assertThat(twice.scaled(f32(5, 7)).toFloatArray()).containsExactly(10f, 14f);
    }

    @Test
    void nestedCompileCallIsInlined() {
        int compiledBefore = GraphEvaluatingPipeline.COMPILED.size();
        int innerBefore = Kernels.INNER_BODY.get();
        Tensor r = Kernels.outer(f32(1, 2, 3, 4, 5), f32(3, 3, 3, 3, 3));
        assertThat(r.toFloatArray()).containsExactly(6f, 12f, 18f, 24f, 30f);
        assertThat(Kernels.INNER_BODY.get() - innerBefore).isEqualTo(1);
        List<Graph> compiled = GraphEvaluatingPipeline.COMPILED.subList(compiledBefore,
                GraphEvaluatingPipeline.COMPILED.size());
        assertThat(compiled).hasSize(1);
        assertThat(compiled.getFirst().name()).isEqualTo("Kernels.outer");
        assertThat(compiled.getFirst().body().nodes()).extracting(Node::prim).containsExactly(Prims.ADD, Prims.MUL);
    }

    @Test
    void wideConstantArgumentsReachTheGate() {
        assertThat(new Kernels(2).shifted(3L, 0.5, f32(2, 4)).toFloatArray()).containsExactly(7f, 8f);
        assertThat(new Kernels(2).shifted(-1L, 2, f32(2, 4)).toFloatArray()).containsExactly(2f, 6f);
    }

    @Test
    void aBodyMergingUserTypesIsGated() {
        int before = GraphEvaluatingPipeline.COMPILED.size();
        assertThat(Kernels.mergesTypes(f32(1, 2), 1).toFloatArray()).containsExactly(2f, 3f);
        assertThat(Kernels.mergesTypes(f32(1, 2), 0).toFloatArray()).containsExactly(0f, 1f);
        assertThat(GraphEvaluatingPipeline.COMPILED.subList(before, GraphEvaluatingPipeline.COMPILED.size()))
                .extracting(Graph::name).containsExactly("Kernels.mergesTypes", "Kernels.mergesTypes");
    }

    @Test
    void arrayListAndVoidResultsAreRebuilt() {
        Tensor[] sd = Kernels.sumAndDifference(f32(5, 1), f32(2, 4));
        assertThat(sd).hasSize(2);
        assertThat(sd[0].toFloatArray()).containsExactly(7f, 5f);
        assertThat(sd[1].toFloatArray()).containsExactly(3f, -3f);

        Tensor x = f32(1), y = f32(2);
        List<Tensor> swapped = Kernels.swap(x, y);
        assertThat(swapped.get(0).toFloatArray()).containsExactly(2f);
        assertThat(swapped.get(1).toFloatArray()).containsExactly(1f);

        int before = Kernels.SIDE_EFFECTS.get();
        Kernels.sideEffect(x);
        Kernels.sideEffect(y);
        assertThat(Kernels.SIDE_EFFECTS.get() - before).isEqualTo(1);
    }

    @Test
    void anArgumentKindFromTheServiceLoaderKeysByItsKey() {
        int before = Kernels.TAGGED_BODY.get();
        assertThat(Kernels.tagged(f32(1, 2), new Tag("double")).toFloatArray()).containsExactly(2f, 4f);
        assertThat(Kernels.tagged(f32(3, 4), new Tag("double")).toFloatArray()).containsExactly(6f, 8f);
        assertThat(Kernels.TAGGED_BODY.get() - before).isEqualTo(1);
        assertThat(Kernels.tagged(f32(3, 4), new Tag("id")).toFloatArray()).containsExactly(3f, 4f);
        assertThat(Kernels.TAGGED_BODY.get() - before).isEqualTo(2);
    }

    @Test
    void exceptionsFromTheBodyPropagateUnchanged() {
        assertThatThrownBy(() -> Kernels.axpy(f32(1, 2), f32(1, 2, 3), f32(1, 2)))
                .isInstanceOf(ShapeException.class)
                .hasMessageMatching("Kernels\\.java:\\d+: mul: shapes \\[2] and \\[3] are not broadcast-compatible");
    }

    @Test
    void anUnsupportedArgumentNamesTheCallingLine() {
        int line = Lines.here(1);
        assertThatThrownBy(() -> Kernels.withAnything(f32(1), new StringBuilder()))
                .isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CompileGateTest.java:" + line + ": argument 1 of Kernels.withAnything(Tensor, Object)"
                        + " is a java.lang.StringBuilder")
                .hasMessageContaining("trees of tensors")
                .hasMessageContaining("accepts Tensor, trees of tensors (List, Map, array or record), compile-time constants")
                .hasMessageContaining("tags (Tag)");
    }

    @Test
    void aBadTreeArgumentNamesTheCallingLineAndThePath() {
        record Pair(Tensor a, Tensor b) {
        }
        assertThat(((Tensor) Kernels.withAnything(f32(1), new Pair(f32(2), f32(3)))).shape()).containsExactly(1);
        int line = Lines.here(1);
        assertThatThrownBy(() -> Kernels.withAnything(f32(1), List.of(new Pair(f32(2), null))))
                .isInstanceOf(ShapeException.class)
                .hasMessage("CompileGateTest.java:" + line + ": argument 1 of Kernels.withAnything(Tensor, Object)[0].b"
                        + " is null; a tree's leaves are tensors");
    }

    @Test
    void anUnsupportedReturnTypeNamesTheMethod() {
        assertThatThrownBy(() -> Kernels.describe(f32(1)))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("Kernels.describe(Tensor) returns java.lang.String");
    }

    @Test
    void readingATracedValueInsideCompileNamesTheLine() {
        assertThatThrownBy(() -> Kernels.readsItem(f32(1)))
                .isInstanceOf(TracedValueException.class)
                .hasMessageMatching("Kernels\\.java:\\d+: item\\(\\) reads a traced tensor.*");
        assertThat(((TracedValueException) catchThrown(() -> Kernels.readsItem(f32(2)))).location().method())
                .isEqualTo("readsItem");
    }

    @Test
    void aTracedTensorKeptInAFieldFailsWhenUsedLater() {
        Kernels.keeps(f32(1, 2));
        assertThat(Kernels.kept.isTraced()).isTrue();
        assertThatThrownBy(() -> Kernels.usesKept(f32(1, 2)))
                .isInstanceOf(TracedValueException.class)
                .hasMessageContaining("after its trace ended");
        assertThatThrownBy(() -> Kernels.inner(Kernels.kept))
                .isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("CompileGateTest.java:");
    }

    @Test
    void concurrentCallersGetTheirOwnResults() throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<float[]>> results = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                float k = t;
                results.add(pool.submit(() -> Kernels.axpy(f32(k, k), f32(1, 2), f32(0, 1)).toFloatArray()));
            }
            for (int t = 0; t < 16; t++) {
                assertThat(results.get(t).get()).containsExactly(t, 2f * t + 1);
            }
        }
    }

    @Test
    void traceForLoweringTakesTensorSpecsAndConstants() {
        Graph g = CompileGate.trace(Kernels.class, "scale", new Object[] {TensorSpec.of(DType.F32, 4, 4), 2f});
        assertThat(g.body().params()).hasSize(1);
        assertThat(g.body().params().getFirst().aval().toString()).isEqualTo("f32[4,4]");
        assertThat(g.body().nodes()).extracting(Node::prim)
                .containsExactly(Prims.CONSTANT, Prims.BROADCAST_IN_DIM, Prims.MUL);
    }

    @Test
    void traceForLoweringRejectsAmbiguousAndMissingMethods() {
        assertThatThrownBy(() -> CompileGate.trace(Kernels.class, "overloaded",
                new Object[] {TensorSpec.of(DType.F32, 2), 1f}))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("several methods Kernels.overloaded with 2 parameters");
        assertThatThrownBy(() -> CompileGate.trace(Kernels.class, "absent", new Object[0]))
                .isInstanceOf(WeftException.class)
                .hasMessageContaining("no method Kernels.absent with 0 parameters");
        assertThat(CompileGate.trace(Kernels.class, "overloaded", new Object[] {TensorSpec.of(DType.F32, 2)})
                .body().nodes()).isEmpty();
    }

    private static Throwable catchThrown(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("nothing thrown");
    }
}
