package dev.weft.it.batching;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.testing.TensorAssert;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code vmap} composes with control flow, with itself and with differentiation, eagerly and inside
 * {@code @Compile}, each against a loop over the elements. A cond on a batched predicate runs only each element's
 * branch: the other branch's NaN or infinity never reaches the result or its gradient.
 */
class VmapCompositionTest {
    private static final double TOLERANCE = 1e-12;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** {@code |w|} where it is positive, else {@code 3 sum(w)}: the true branch is singular at 0. */
    static Tensor guarded(Tensor w) {
        Tensor n2 = w.mul(w).sum();
        return Weft.cond(n2.gt(0), n2::sqrt, () -> w.sum().mul(3));
    }

    /** Rows of which the second is zero, where {@link #guarded}'s true branch has an infinite slope. */
    private static Tensor rows() {
        return Tensor.of(new double[] {1, 2, 2, 0, 0, 0, -3, 0, 4, 0.5, -0.5, 1}, 4, 3);
    }

    private static Tensor perRow(Function<Tensor, Tensor> f, Tensor x) {
        return Batches.loop(xs -> List.of(f.apply(xs.getFirst())), new int[] {0}, new int[] {0}, List.of(x),
                x.shape()[0]).getFirst();
    }

    static Tensor vmapGradEager(Tensor x) {
        return Weft.vmap(Weft.grad(VmapCompositionTest::guarded)).apply(x);
    }

    @Compile
    static Tensor vmapGradCompiled(Tensor x) {
        return vmapGradEager(x);
    }

    static Tensor gradVmapEager(Tensor x) {
        return Weft.grad(v -> Weft.vmap(VmapCompositionTest::guarded).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor gradVmapCompiled(Tensor x) {
        return gradVmapEager(x);
    }

    @Test
    void aCondOnABatchedPredicateRunsEachElementsBranchOnly() {
        Tensor x = rows();
        Tensor expected = perRow(VmapCompositionTest::guarded, x);
        TensorAssert.assertThat(Weft.vmap(VmapCompositionTest::guarded).apply(x)).isCloseTo(expected, TOLERANCE);
        Tensor logs = Weft.vmap((Tensor v) -> Weft.cond(v.min().gt(0), v::log, v::neg)).apply(x);
        assertThat(logs.toDoubleArray()).doesNotContain(Double.NaN);
        TensorAssert.assertThat(logs).isCloseTo(perRow(v -> Weft.cond(v.min().gt(0), v::log, v::neg), x),
                TOLERANCE);
    }

    @Test
    void vmapOfGradEqualsEachRowsGradientWithoutNaN() {
        Tensor x = rows();
        Tensor expected = perRow(Weft.grad(VmapCompositionTest::guarded), x);
        assertThat(expected.toDoubleArray()).containsSequence(3, 3, 3);
        TensorAssert.assertThat(vmapGradEager(x)).isCloseTo(expected, TOLERANCE);
        TensorAssert.assertThat(vmapGradCompiled(x)).isCloseTo(expected, TOLERANCE);
    }

    @Test
    void gradOfVmapEqualsEachRowsGradientWithoutNaN() {
        Tensor x = rows();
        Tensor expected = perRow(Weft.grad(VmapCompositionTest::guarded), x);
        TensorAssert.assertThat(gradVmapEager(x)).isCloseTo(expected, TOLERANCE);
        TensorAssert.assertThat(gradVmapCompiled(x)).isCloseTo(expected, TOLERANCE);
    }

    /** A loop whose body takes a branch on the carry: batched, the cond inside runs per element. */
    static Tensor looped(Tensor v, Tensor w) {
        return Weft.fori(0, 3, v, (i, c) -> Weft.cond(c.sum().gt(0), () -> c.mul(w).sin(),
                () -> c.add(w).mul(0.5)));
    }

    static Tensor nestedEager(Tensor x, Tensor w) {
        Function<List<Tensor>, List<Tensor>> inner = Weft.vmap(a -> List.of(looped(a.get(0), a.get(1))),
                new int[] {0, -1}, new int[] {1});
        return Weft.vmap(a -> inner.apply(List.of(a.get(0), a.get(1))), new int[] {2, 0}, new int[] {0})
                .apply(List.of(x, w)).getFirst();
    }

    @Compile
    static Tensor nestedCompiled(Tensor x, Tensor w) {
        return nestedEager(x, w);
    }

    @Test
    void vmapOfVmapEqualsADoubleLoop() {
        Random rnd = new Random(3);
        // x: [inner 3, element 4, outer 2]; w: [outer 2, element 4]
        Tensor x = Batches.random(rnd, -1, 1, 3, 4, 2), w = Batches.random(rnd, -1, 1, 2, 4);
        Tensor expected = Batches.loop(a -> Batches.loop(b -> List.of(looped(b.get(0), b.get(1))),
                new int[] {0, -1}, new int[] {1}, a, 3), new int[] {2, 0}, new int[] {0}, List.of(x, w), 2)
                .getFirst();
        assertThat(expected.shape()).containsExactly(2, 4, 3);
        TensorAssert.assertThat(nestedEager(x, w)).isCloseTo(expected, TOLERANCE);
        TensorAssert.assertThat(nestedCompiled(x, w)).isCloseTo(expected, TOLERANCE);
    }

    @Test
    void jvpOfVmapEqualsEachElementsJvp() {
        Random rnd = new Random(5);
        Tensor x = Batches.random(rnd, -1, 1, 3, 4), t = Batches.random(rnd, -1, 1, 3, 4);
        Tensor w = Batches.random(rnd, -1, 1, 4);
        Function<Tensor, Tensor> f = v -> looped(v, w);
        Tensor tangent = Weft.jvp(in -> List.of(Weft.vmap(f).apply(in.getFirst())), List.of(x), List.of(t))
                .tangents().getFirst();
        Tensor expected = Batches.loop(in -> Weft.jvp(a -> List.of(f.apply(a.getFirst())), List.of(in.get(0)),
                List.of(in.get(1))).tangents(), new int[] {0, 0}, new int[] {0}, List.of(x, t), 3).getFirst();
        TensorAssert.assertThat(tangent).isCloseTo(expected, TOLERANCE);
    }

    @Compile
    static Tensor loopCompiled(Tensor x, Tensor w) {
        return Weft.vmap((Tensor v) -> Weft.fori(0, 5, v, (i, c) -> c.mul(w).sin())).apply(x);
    }

    @Test
    void aBatchedLoopIsOneLoopInTheCompiledProgram() {
        String mlir = Weft.lower(VmapCompositionTest.class, "loopCompiled", TensorSpec.of(DType.F64, 3, 4),
                TensorSpec.of(DType.F64, 4)).toMlir();
        assertThat(mlir.split("stablehlo.while", -1)).hasSize(2);
        Tensor x = Batches.random(new Random(7), -1, 1, 3, 4), w = Batches.random(new Random(8), -1, 1, 4);
        TensorAssert.assertThat(loopCompiled(x, w)).isCloseTo(perRow(v -> Weft.fori(0, 5, v,
                (i, c) -> c.mul(w).sin()), x), TOLERANCE);
    }

    @Test
    void anOutputThatDependsOnNoBatchedArgumentIsRepeated() {
        Tensor x = Tensor.arange(DType.F64, 6).reshape(2, 3), w = Tensor.of(new double[] {1, 2});
        List<Tensor> out = Weft.vmap(a -> List.of(a.get(0).sum(), a.get(1).mul(2)), new int[] {1, -1},
                new int[] {0, 1}).apply(List.of(x, w));
        TensorAssert.assertThat(out.get(0)).isEqualTo(Tensor.of(new double[] {3, 5, 7}));
        TensorAssert.assertThat(out.get(1)).isEqualTo(Tensor.of(new double[] {2, 2, 2, 4, 4, 4}, 2, 3));
    }
}
