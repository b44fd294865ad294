package dev.weft.lowering;

import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.BufferPlanning;
import dev.weft.lowering.passes.CommonSubexpressionElimination;
import dev.weft.lowering.passes.DeadCodeElimination;
import dev.weft.lowering.passes.ElementwiseFusion;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.ReductionFusion;
import dev.weft.lowering.passes.ThreadTokens;
import dev.weft.lowering.passes.Verifier;
import dev.weft.spi.CommBindings;
import dev.weft.tracer.Executable;

/**
 * Targets for the tests of this module, which has no executor: {@link #CPU} runs every pass the way the backends'
 * CPU target does, {@link #GPU} is named as the GPU target (whose rules tests may register) with no passes.
 */
public record TestTarget(String name, String commCallPrefix, Pipeline pipeline) implements Target {
    public static final TestTarget CPU = new TestTarget("cpu", "weft.mpi.", Pipeline.of(
            new Verifier(),
            new ThreadTokens(),
            new DeadCodeElimination(),
            new CommonSubexpressionElimination(),
            new ElementwiseFusion(ElementwiseFusion.Inputs.VIEWS),
            new ReductionFusion(),
            new Verifier(),
            new BufferPlanning()));
    public static final TestTarget GPU = new TestTarget("gpu", "weft.nccl.", Pipeline.of());

    @Override
    public Executable executable(Module module, CommBindings comms) {
        throw new UnsupportedOperationException("lowering tests do not run modules");
    }
}
