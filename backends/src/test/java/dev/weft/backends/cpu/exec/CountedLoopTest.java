package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.prim.ElementwiseOp;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.backends.gpu.exec.GpuPlan;
import dev.weft.backends.gpu.exec.GpuPlanner;
import dev.weft.backends.gpu.exec.GpuStep;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.lowering.Lowerer;
import dev.weft.lowering.LoweringRules;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.passes.CommonSubexpressionElimination;
import dev.weft.lowering.passes.Pass;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.Aval;
import dev.weft.tracer.Tracer;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both executors know a {@code Weft.fori} loop by its {@link Attr.CountedLoop} alone: whether CSE shares the
 * step's constant with the body changes nothing, and the same loop without the attribute runs as a general while
 * loop, with the same results.
 */
class CountedLoopTest {
    private static final int TRIPS = 5;
    private static final Aval I32_2 = Aval.of(DType.I32, 2);

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** {@code d ← d - 1}: under CSE, the body's 1 and the counter's step are one constant. */
    private static Tensor countDown(Tensor d) {
        return Weft.fori(0, TRIPS, d, (i, c) -> c.sub(1));
    }

    /** {@code countDown} lowered for {@code target} through its pipeline, without CSE unless {@code cse}. */
    private static Module lower(Target target, boolean cse) {
        var graph = Tracer.trace("countDown", List.of(I32_2), in -> List.of(countDown(in.getFirst())));
        Module m = new Lowerer(LoweringRules.discover()).lower(graph, target);
        Pass[] passes = target.pipeline().passes().stream()
                .filter(p -> cse || !(p instanceof CommonSubexpressionElimination)).toArray(Pass[]::new);
        return Pipeline.of(passes).run(m, StageListener.NONE);
    }

    private static Op loop(Module m) {
        return m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.WHILE)).findFirst()
                .orElseThrow();
    }

    private static boolean stepConstantShared(Module m) {
        Op add = loop(m).regions().get(1).ops().stream().filter(o -> o.elementwise() == ElementwiseOp.ADD).findFirst()
                .orElseThrow();
        return loop(m).regions().get(1).ops().stream().filter(o -> o != add)
                .anyMatch(o -> o.operands().contains(add.operand(1)));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void theCpuCountsInJavaAndRunsStraightWithOrWithoutCse(boolean cse) {
        Module m = lower(new CpuTarget(), cse);
        assertThat(Attr.CountedLoop.of(loop(m))).contains(new Attr.CountedLoop(0, 0, TRIPS, 1));
        assertThat(stepConstantShared(m)).as("CSE shares the step's 1").isEqualTo(cse);
        assertThat(StraightLoopTest.runsStraight(m)).isTrue();
        Tensor d = Tensor.of(new int[] {3, -7}, 2);
        for (boolean straight : new boolean[] {true, false}) {
            CpuExecutable exe = new CpuExecutable(m, new CustomCallRegistry(), OpCompilers.standard(), straight);
            assertThat(exe.run(List.of(d)).getFirst().toIntArray()).containsExactly(3 - TRIPS, -7 - TRIPS);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void theGpuPlansACountedLoopWithOrWithoutCse(boolean cse) {
        GpuPlan p = GpuPlanner.plan(lower(new GpuTarget(), cse), PtxTarget.DEFAULT);
        assertThat(p.main().steps()).filteredOn(GpuStep.Fori.class::isInstance).singleElement()
                .extracting(s -> ((GpuStep.Fori) s).trips()).isEqualTo((long) TRIPS);
        assertThat(p.main().steps()).noneMatch(GpuStep.While.class::isInstance);
    }

    /** Without its attribute the loop is a general while loop: its condition runs, and the results are the same. */
    @Test
    void withoutTheAttributeTheLoopRunsItsCondition() {
        Module m = lower(new CpuTarget(), true);
        loop(m).attributes().remove(Attr.CountedLoop.KEY);
        assertThat(StraightLoopTest.runsStraight(m)).isFalse();
        Tensor d = Tensor.of(new int[] {3, -7}, 2);
        assertThat(new CpuExecutable(m).run(List.of(d)).getFirst().toIntArray())
                .containsExactly(3 - TRIPS, -7 - TRIPS);

        Module g = lower(new GpuTarget(), true);
        loop(g).attributes().remove(Attr.CountedLoop.KEY);
        GpuPlan p = GpuPlanner.plan(g, PtxTarget.DEFAULT);
        assertThat(p.main().steps()).anyMatch(GpuStep.While.class::isInstance).noneMatch(GpuStep.Fori.class::isInstance);
    }
}
