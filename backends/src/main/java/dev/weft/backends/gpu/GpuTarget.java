package dev.weft.backends.gpu;

import dev.weft.backends.gpu.exec.GpuExecutable;
import dev.weft.backends.gpu.exec.GpuPlanner;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.BufferPlanning;
import dev.weft.lowering.passes.CommonSubexpressionElimination;
import dev.weft.lowering.passes.DeadCodeElimination;
import dev.weft.lowering.passes.ElementwiseFusion;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.SliceOfPad;
import dev.weft.lowering.passes.SumBeforeAllreduce;
import dev.weft.lowering.passes.ThreadTokens;
import dev.weft.lowering.passes.Verifier;
import dev.weft.spi.CommBindings;
import dev.weft.tracer.Executable;

/**
 * The {@code gpu} target: modules run on the {@link GpuExecutable} (generated PTX kernels, cuBLAS, NCCL for the
 * {@code weft.nccl.*} custom calls), which fails, rather than falling back to the CPU, when there is no usable CUDA
 * device. Its listing appends the PTX of every kernel, which needs no device.
 */
public record GpuTarget() implements Target {
    /** The name users type. */
    public static final String NAME = "gpu";

    private static final Pipeline PIPELINE = Pipeline.of(
            new Verifier(),
            new SumBeforeAllreduce(),                               // a bias's cotangent summed before it travels
            new ThreadTokens(),
            new SliceOfPad(),                                       // a window of a padded value copies only itself
            new DeadCodeElimination(),
            new CommonSubexpressionElimination(),
            new ElementwiseFusion(ElementwiseFusion.Inputs.WHOLE),  // kernels read whole operands
            new Verifier(),                                         // no fuse-reductions: reduce kernels of its own
            new BufferPlanning());

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Pipeline pipeline() {
        return PIPELINE;
    }

    @Override
    public String commCallPrefix() {
        return "weft.nccl.";
    }

    @Override
    public Executable executable(Module module, CommBindings comms) {
        return new GpuExecutable(module, comms);
    }

    @Override
    public String listing(Module module) {
        return module.toMlir() + "\n" + GpuPlanner.plan(module, PtxTarget.fromSystemProperties()).ptx();
    }
}
