package dev.weft.backends.cpu;

import dev.weft.backends.cpu.blas.OpenBlas;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.cpu.exec.CustomCallRegistry;
import dev.weft.backends.cpu.exec.NativeLoopLinking;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.passes.BufferPlanning;
import dev.weft.lowering.passes.CombineAllReduces;
import dev.weft.lowering.passes.CommonSubexpressionElimination;
import dev.weft.lowering.passes.DeadCodeElimination;
import dev.weft.lowering.passes.ElementwiseFusion;
import dev.weft.lowering.passes.FoldTransposes;
import dev.weft.lowering.passes.OverlapCommunication;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.ReductionFusion;
import dev.weft.lowering.passes.SliceOfPad;
import dev.weft.lowering.passes.SumBeforeAllreduce;
import dev.weft.lowering.passes.ThreadTokens;
import dev.weft.lowering.passes.Verifier;
import dev.weft.spi.CommBindings;
import dev.weft.spi.Preload;
import dev.weft.tracer.Executable;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@code cpu} target (the default): modules run on the {@link CpuExecutable}, communication custom calls
 * ({@code weft.mpi.*}, run by a {@link dev.weft.backends.cpu.exec.CpuCustomCallProvider}) on the bound
 * communicators' runtime (fake ranks or MPI).
 */
public record CpuTarget() implements Target {
    /** The name users type. */
    public static final String NAME = "cpu";

    static {
        Preload.inBackground("weft-loops-link", NativeLoopLinking::link);
    }

    /** Whether a program with a matrix product has started loading OpenBLAS. */
    private static final AtomicBoolean BLAS_LOADING = new AtomicBoolean();

    private static final Pipeline PIPELINE = Pipeline.of(
            new Verifier(),
            new SumBeforeAllreduce(),                               // a bias's cotangent summed before it travels
            new CombineAllReduces(),                                // gradient buckets: one iallreduce each
            new ThreadTokens(),
            new SliceOfPad(),                                       // a window of a padded value copies only itself
            new FoldTransposes(),                                   // matmuls read transposed operands in place
            new DeadCodeElimination(),
            new CommonSubexpressionElimination(),
            new ElementwiseFusion(ElementwiseFusion.Inputs.VIEWS),  // fused loops read windows and pieces in place
            new ReductionFusion(),                                  // the executor runs weft.fused_reduce
            new OverlapCommunication(),                             // starts early, waits late: kernels between
            new Verifier(),
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
        return "weft.mpi.";
    }

    /**
     * A program with a matrix product starts loading OpenBLAS while its passes run and its executor is built, so
     * that its first product does not wait for the library (a program without one never loads it).
     */
    @Override
    public void lowered(Module module) {
        if (!BLAS_LOADING.get() && hasMatrixProduct(module) && BLAS_LOADING.compareAndSet(false, true)) {
            Preload.inBackground("weft-blas-load", OpenBlas::warmUp);
        }
    }

    private static boolean hasMatrixProduct(Module module) {
        boolean[] found = {false};
        IrWalk.forEachOp(module, op -> found[0] |= op.name().equals(StableHlo.DOT_GENERAL));
        return found[0];
    }

    @Override
    public Executable executable(Module module, CommBindings comms) {
        return new CpuExecutable(module, CustomCallRegistry.of(module, comms));
    }
}
