package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static dev.weft.it.ad.AdProgramsTest.assertMatchesDifferences;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.prim.CommPrims;
import dev.weft.testing.RankRunner;
import dev.weft.testing.Ranks;
import dev.weft.testing.TensorAssert;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Reverse mode through {@code Weft.fori} is one loop forward, storing what the loop back needs per step, and one loop
 * back: the program's size does not grow with the trip count. Gradients equal finite differences and compiled equals
 * eager; nested loops, a loop inside grad of grad, and a loop whose body communicates.
 */
class LoopGradTest {
    private static final Random RND = new Random(11);

    private static Tensor random(long... shape) {
        return AdRulesTest.random(shape, -1, 1, false, RND);
    }

    /** A loop reading its carry, its index and a captured weight, then the result used with the input again. */
    static Tensor loss(Tensor x, Tensor w, int steps) {
        Tensor y = Weft.fori(0, steps, x, (i, c) -> c.mul(c.mul(w).cos()).add(i.cast(DType.F64).mul(0.01))
                .add(w.mul(0.1)));
        return y.mul(x).sum();
    }

    static List<Tensor> gradEager(Tensor x, Tensor w, int steps) {
        return Weft.vjp(v -> List.of(loss(v.get(0), v.get(1), steps)), List.of(x, w))
                .pullback(List.of(Tensor.scalar(DType.F64, 1)));
    }

    @Compile
    static List<Tensor> gradCompiled(Tensor x, Tensor w, int steps) {
        return gradEager(x, w, steps);
    }

    @Test
    void aLoopGradientEqualsFiniteDifferencesAndCompiledEqualsEager() {
        Tensor x = random(5), w = random(5);
        List<Tensor> eager = gradEager(x, w, 40);
        List<Tensor> compiled = gradCompiled(x, w, 40);
        TensorAssert.assertThat(compiled.get(0)).isCloseTo(eager.get(0), 1e-13);
        TensorAssert.assertThat(compiled.get(1)).isCloseTo(eager.get(1), 1e-13);
        assertMatchesDifferences(eager.get(0), x, v -> loss(v, w, 40));
        assertMatchesDifferences(eager.get(1), w, v -> loss(x, v, 40));
    }

    @Test
    void theDifferentiatedProgramDoesNotGrowWithTheTripCount() {
        TensorSpec s = TensorSpec.of(DType.F64, 5);
        String ten = Weft.lower(LoopGradTest.class, "gradCompiled", s, s, 10).toString();
        String thousand = Weft.lower(LoopGradTest.class, "gradCompiled", s, s, 1000).toString();
        assertThat(ops(thousand)).isEqualTo(ops(ten)).isLessThan(200);
        assertThat(thousand).contains("stablehlo.dynamic_update_slice").contains("stablehlo.dynamic_slice");
    }

    private static long ops(String module) {
        return module.lines().filter(l -> l.contains(" = stablehlo.") || l.contains(" = \"stablehlo.")).count();
    }

    /** A contracting loop (each step scales the carry's derivative by about 0.9), so that 5000 steps stay finite. */
    static Tensor settle(Tensor x, Tensor w, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> c.mul(0.9).add(c.mul(w).sin().mul(0.05)).add(w.mul(0.01)))
                .mul(x).sum();
    }

    @Compile
    static List<Tensor> settleGrad(Tensor x, Tensor w, int steps) {
        return Weft.vjp(v -> List.of(settle(v.get(0), v.get(1), steps)), List.of(x, w))
                .pullback(List.of(Tensor.scalar(DType.F64, 1)));
    }

    @Test
    void aLongLoopRunsInOneLoopEachWay() {
        Tensor x = random(3), w = random(3);
        List<Tensor> g = settleGrad(x, w, 5000);
        assertMatchesDifferences(g.get(0), x, v -> settle(v, w, 5000));
        assertMatchesDifferences(g.get(1), w, v -> settle(x, v, 5000));
    }

    /** An inner loop of {@code inner} steps inside an outer one; the inner body reads the outer index. */
    static Tensor nested(Tensor x, int outer, int inner) {
        Tensor y = Weft.fori(0, outer, x, (i, c) -> Weft.fori(0, inner, c, (j, d) -> d.sin().mul(1.1)
                .add(i.cast(DType.F64).mul(j.cast(DType.F64)).mul(0.001))));
        return y.mul(y).sum();
    }

    @Compile
    static Tensor nestedGradCompiled(Tensor x) {
        return Weft.grad(v -> nested(v, 4, 3)).apply(x);
    }

    @Test
    void nestedLoops() {
        Tensor x = random(4);
        Tensor eager = Weft.grad(v -> nested(v, 4, 3)).apply(x);
        TensorAssert.assertThat(nestedGradCompiled(x)).isCloseTo(eager, 1e-13);
        assertMatchesDifferences(eager, x, v -> nested(v, 4, 3));
    }

    /** The second derivative of a loop: the loop back is differentiated in turn. */
    static Tensor twice(Tensor x) {
        return Weft.grad(v -> Weft.grad(u -> Weft.fori(0, 5, u, (i, c) -> c.sin().add(c.mul(0.2))).sum())
                .apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor twiceCompiled(Tensor x) {
        return twice(x);
    }

    @Test
    void gradOfGradThroughALoop() {
        Tensor x = random(4);
        Tensor eager = twice(x);
        TensorAssert.assertThat(twiceCompiled(x)).isCloseTo(eager, 1e-13);
        assertMatchesDifferences(eager, x, v -> Weft.grad(u -> Weft.fori(0, 5, u, (i, c) -> c.sin().add(c.mul(0.2)))
                .sum()).apply(v).sum());
    }

    /** Loops whose bodies communicate, against central differences of the global function on 1 to 3 ranks. */
    static List<CommGradTest.Case> commCases() {
        return List.of(
                new CommGradTest.Case("allreduce in a loop", CommPrims.ALLREDUCE, (c, x) -> Weft.fori(0, 6, x,
                        (i, v) -> c.allreduce(v.mul(c.rank() + 1).tanh(), ReduceOp.SUM).mul(0.5)).mul(x), 3, false, 1),
                new CommGradTest.Case("sendrecv in a loop", CommPrims.SENDRECV, (c, x) -> Weft.fori(0, 5, x,
                        (i, v) -> c.sendrecv(v.sin(), (c.rank() + 1) % c.size(), (c.rank() + c.size() - 1) % c.size(),
                                3).add(v.mul(0.5))).mul(x), 3, false, 1));
    }

    @Test
    void loopsThatCommunicate() {
        for (CommGradTest.Case c : commCases()) {
            for (int n = 1; n <= 3; n++) {
                RankRunner.run(n, comm -> {
                    CommGradTest.checkForward(c, comm);
                    CommGradTest.checkReverse(c, comm);
                });
            }
        }
    }

    @Compile
    static Tensor commLoopGradCompiled(Comm world, Tensor x) {
        return Weft.grad(v -> commCases().getFirst().f().apply(world, v).sum()).apply(x);
    }

    @Ranks({2, 3})
    void aCompiledLoopThatCommunicatesEqualsEager(Comm world) {
        Tensor x = AdRulesTest.random(new long[] {3}, -1, 1, false, new Random(world.rank()));
        Tensor eager = Weft.grad(v -> commCases().getFirst().f().apply(world, v).sum()).apply(x);
        TensorAssert.assertThat(commLoopGradCompiled(world, x)).isCloseTo(eager, 1e-13);
    }
}
