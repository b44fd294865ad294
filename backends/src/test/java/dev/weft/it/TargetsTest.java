package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.lowering.ir.Module;
import dev.weft.tracer.CompileGate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Targets are found by name, each lowering with its own pipeline: the CPU's fuses reductions and reads views, the
 * GPU's does neither and lists its kernels' PTX.
 */
class TargetsTest {
    static Tensor normSquared(Tensor x) {
        return x.mul(x).sum();
    }

    static Tensor windowSum(Tensor x) {
        return x.slice(new long[] {1}, new long[] {5}).add(1.0).neg();
    }

    private static Graph traced(String method) {
        return CompileGate.trace(TargetsTest.class, method, new Object[] {TensorSpec.of(DType.F32, 8)});
    }

    private static List<String> stages(Target target, String method) {
        List<String> stages = new ArrayList<>();
        Lowering.lower(traced(method), target, (stage, mlir) -> stages.add(stage));
        return stages;
    }

    @Test
    void namesResolveToTheBackendsTargets() {
        assertThat(Targets.named("cpu")).isEqualTo(new CpuTarget());
        assertThat(Targets.named("gpu")).isEqualTo(new GpuTarget());
        assertThat(Targets.all()).extracting(Target::name).containsExactly("cpu", "gpu");
    }

    @Test
    void anUnknownNameListsTheKnownOnes() {
        assertThatThrownBy(() -> Targets.named("tpu")).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("TargetsTest.java:")
                .hasMessageEndingWith(": unknown target 'tpu'; the targets are 'cpu', 'gpu'");
        assertThatThrownBy(() -> Weft.lower("tpu", TargetsTest.class, "normSquared", TensorSpec.of(DType.F32, 8)))
                .isInstanceOf(WeftException.class).hasMessageStartingWith("TargetsTest.java:")
                .hasMessageContaining("'tpu'");
    }

    @Test
    void eachTargetRunsItsOwnPipeline() {
        assertThat(stages(new CpuTarget(), "normSquared")).containsExactly("lowered", "verify", "sum-before-allreduce",
                "combine-allreduces",
                "thread-tokens",
                "slice-of-pad", "fold-transposes", "dce", "cse", "fuse-elementwise", "fuse-reductions", "overlap-comm",
                "verify",
                "plan-buffers");
        assertThat(stages(new GpuTarget(), "normSquared")).containsExactly("lowered", "verify",
                "sum-before-allreduce", "thread-tokens",
                "slice-of-pad", "dce", "cse", "fuse-elementwise", "verify", "plan-buffers");
    }

    @Test
    void onlyTheCpuFusesReductionsAndReadsViews() {
        Module cpu = Lowering.lower(traced("normSquared"), new CpuTarget(), (s, t) -> { });
        Module gpu = Lowering.lower(traced("normSquared"), new GpuTarget(), (s, t) -> { });
        assertThat(cpu.target()).isEqualTo(CpuTarget.NAME);
        assertThat(cpu.toMlir()).contains("\"weft.fused_reduce\"").doesNotContain("\"stablehlo.reduce\"");
        assertThat(gpu.toMlir()).contains("\"stablehlo.reduce\"").doesNotContain("\"weft.fused_reduce\"");

        String cpuWindow = Weft.lower("cpu", TargetsTest.class, "windowSum", TensorSpec.of(DType.F32, 8)).toMlir();
        String gpuWindow = Weft.lower("gpu", TargetsTest.class, "windowSum", TensorSpec.of(DType.F32, 8)).toMlir();
        assertThat(cpuWindow).doesNotContain("\"stablehlo.slice\"").contains("weft.slice_starts");
        assertThat(gpuWindow).contains("\"stablehlo.slice\"").doesNotContain("weft.slice_starts");
    }

    @Test
    void theGpuListingAddsTheKernelsPtx() {
        Module gpu = (Module) Weft.lower("gpu", TargetsTest.class, "windowSum", TensorSpec.of(DType.F32, 8));
        Module cpu = (Module) Weft.lower("cpu", TargetsTest.class, "windowSum", TensorSpec.of(DType.F32, 8));
        assertThat(Targets.named(cpu.target()).listing(cpu)).isEqualTo(cpu.toMlir());
        assertThat(Targets.named(gpu.target()).listing(gpu)).startsWith(gpu.toMlir() + "\n").contains(".entry");
    }
}
