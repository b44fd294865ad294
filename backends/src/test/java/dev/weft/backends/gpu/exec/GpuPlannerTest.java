package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.Ptxas;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.lowering.ir.Module;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Plans of traced programs lowered for the GPU target: their steps, and their PTX through ptxas. */
class GpuPlannerTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static GpuPlan plan(String method, Object... args) {
        return GpuPlanner.plan((Module) Weft.lower("gpu", Programs.class, method, args), PtxTarget.DEFAULT);
    }

    private static List<GpuPlan> programs() {
        return List.of(
                plan("smooth", TensorSpec.of(DType.F32, 1000)),
                plan("smooth", TensorSpec.of(DType.F64, 3, 5)),
                plan("logistic", TensorSpec.of(DType.F32, 8, 4), TensorSpec.of(DType.F32, 4, 3)),
                plan("reductions", TensorSpec.of(DType.F64, 6, 5)),
                plan("shuffle", TensorSpec.of(DType.I64, 4, 4)),
                plan("loop", TensorSpec.of(DType.F32, 5), 10),
                plan("iterate", TensorSpec.of(DType.F64, 3), 4),
                plan("prefixRows", TensorSpec.of(DType.F32, 6, 5)),
                plan("integers", TensorSpec.of(DType.I32, 8), TensorSpec.of(DType.I32, 8)),
                plan("casts", TensorSpec.of(DType.F32, 7)),
                plan("total", TensorSpec.of(DType.F32, 1 << 20)),
                plan("halveUntilSmall", TensorSpec.of(DType.F32, 64)),
                plan("lookups", TensorSpec.of(DType.F64, 6, 5)));
    }

    @Test
    void theBenchmarkNamesTheGpuTarget() {
        assertThat(GpuBenchmark.TARGET).isEqualTo(GpuTarget.NAME);
    }

    @Test
    void everyTracedProgramAssembles() throws Exception {
        for (GpuPlan p : programs()) {
            Ptxas.assemble(p.ptx());
        }
    }

    @Test
    void anElementwiseChainIsOneKernelWithScalarConstantsAsInputsAndReleasesAfterLastUse() {
        GpuPlan p = plan("smooth", TensorSpec.of(DType.F32, 1000));
        assertThat(p.kernels()).extracting(Kernel::name).containsExactly("weft_k0_fusion");
        List<GpuStep> steps = p.main().steps();
        int arg = p.main().arguments()[0];
        GpuStep.Constant two = (GpuStep.Constant) steps.get(0), one = (GpuStep.Constant) steps.get(1);
        assertThat(two.data().get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 0)).isEqualTo(2f);
        assertThat(one.data().get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 0)).isEqualTo(1f);
        GpuStep.Allocate out = (GpuStep.Allocate) steps.get(2);
        assertThat(out.bytes()).isEqualTo(4000);
        int[] params = ((GpuStep.Launch) steps.get(3)).params();
        assertThat(params).hasSize(4);
        assertThat(params[3]).isEqualTo(out.slot());
        assertThat(java.util.Arrays.copyOf(params, 3)).containsExactlyInAnyOrder(arg, two.slot(), one.slot());
        assertThat(steps.subList(4, steps.size())).containsExactly(new GpuStep.Release(params[0]),
                new GpuStep.Release(params[1]), new GpuStep.Release(params[2]));
        assertThat(p.main().results()).containsExactly(out.slot());
    }

    @Test
    void aForiBecomesACountedLoopWithoutItsConditionAndConditionalsRunOnTheHost() {
        GpuPlan p = plan("loop", TensorSpec.of(DType.F32, 5), 10);
        GpuStep.Fori l = p.main().steps().stream().filter(GpuStep.Fori.class::isInstance).map(GpuStep.Fori.class::cast)
                .findFirst().orElseThrow();
        assertThat(l.trips()).isEqualTo(10);
        assertThat(l.operands()).hasSize(2);
        assertThat(l.body().steps()).anyMatch(GpuStep.If.class::isInstance);
        assertThat(p.main().steps()).noneMatch(GpuStep.While.class::isInstance);
    }

    @Test
    void aReductionOfFewOutputsRunsInTwoPassesThroughAPartialsBuffer() {
        GpuPlan p = plan("total", TensorSpec.of(DType.F32, 1 << 20));
        List<GpuStep> steps = p.main().steps();
        GpuStep.Allocate partials = steps.stream().filter(GpuStep.Allocate.class::isInstance).map(GpuStep.Allocate.class::cast)
                .filter(a -> a.bytes() == 512 * 4).findFirst().orElseThrow();
        List<GpuStep.Launch> launches = steps.stream().filter(GpuStep.Launch.class::isInstance)
                .map(GpuStep.Launch.class::cast).toList();
        assertThat(launches).hasSize(2);
        assertThat(launches.get(0).params()).containsExactly(p.main().arguments()[0], partials.slot());
        assertThat(launches.get(1).params()[0]).isEqualTo(partials.slot());
        assertThat(launches.get(1).params()[2]).isEqualTo(p.main().results()[0]);
        assertThat(steps.indexOf(new GpuStep.Release(partials.slot()))).isGreaterThan(steps.indexOf(launches.get(1)));
        assertThat(launches.get(0).kernel().launch().gridX()).isEqualTo(512);
    }

    @Test
    void aMatmulKeepsItsFallbackKernel() {
        GpuPlan p = plan("logistic", TensorSpec.of(DType.F32, 8, 4), TensorSpec.of(DType.F32, 4, 3));
        GpuStep.Matmul m = p.main().steps().stream().filter(GpuStep.Matmul.class::isInstance)
                .map(GpuStep.Matmul.class::cast).findFirst().orElseThrow();
        assertThat(List.of(m.m(), m.n(), m.k(), m.batch())).containsExactly(8, 3, 4, 1);
        assertThat(m.fallback().launch().gridX()).isEqualTo(1);
        assertThat(p.kernels()).contains(m.fallback());
    }

    @Test
    void everyValueDefinedInABlockIsReleasedOnceUnlessItIsAResult() {
        for (GpuPlan p : programs()) {
            checkReleases(p.main());
        }
    }

    private static void checkReleases(BlockPlan b) {
        java.util.Set<Integer> defined = new java.util.HashSet<>();
        for (int a : b.arguments()) {
            defined.add(a);
        }
        java.util.Set<Integer> released = new java.util.HashSet<>();
        for (GpuStep s : b.steps()) {
            switch (s) {
                case GpuStep.Allocate a -> defined.add(a.slot());
                case GpuStep.Constant c -> defined.add(c.slot());
                case GpuStep.Alias a -> defined.add(a.to());
                case GpuStep.CustomCall c -> java.util.Arrays.stream(c.results()).forEach(defined::add);
                case GpuStep.While w -> {
                    java.util.Arrays.stream(w.results()).forEach(defined::add);
                    checkReleases(w.cond());
                    checkReleases(w.body());
                }
                case GpuStep.Fori l -> {
                    java.util.Arrays.stream(l.results()).forEach(defined::add);
                    checkReleases(l.body());
                }
                case GpuStep.If i -> {
                    java.util.Arrays.stream(i.results()).forEach(defined::add);
                    checkReleases(i.onTrue());
                    checkReleases(i.onFalse());
                }
                case GpuStep.Release r -> assertThat(released.add(r.slot())).as("released twice: %s", r).isTrue();
                default -> {
                }
            }
        }
        defined.remove(-1);
        for (int r : b.results()) {
            defined.remove(r);
        }
        assertThat(released).isEqualTo(defined);
    }
}
