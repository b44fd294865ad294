package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Module;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An ordered list of passes. {@link #run} reports the module's text to a {@link StageListener} after lowering
 * (stage {@code lowered}) and after each pass; when the environment variable {@code WEFT_DUMP} names a
 * directory, every stage is also written there as {@code NN-<stage>.mlir}.
 */
public final class Pipeline {
    /** The environment variable naming the dump directory. */
    public static final String DUMP_ENV = "WEFT_DUMP";

    private final List<Pass> passes;

    private Pipeline(List<Pass> passes) {
        this.passes = List.copyOf(passes);
    }

    public static Pipeline of(Pass... passes) {
        return new Pipeline(List.of(passes));
    }

    /**
     * verify, thread-tokens, dce, cse, fuse-elementwise, fuse-reductions, verify, plan-buffers. Passes that only
     * apply to one target check the module's target themselves: {@code fuse-reductions} (and the views of
     * {@code fuse-elementwise}) act on the CPU target only.
     */
    public static Pipeline standard() {
        return of(
                new Verifier(),
                new ThreadTokens(),
                new DeadCodeElimination(),
                new CommonSubexpressionElimination(),
                new ElementwiseFusion(),
                new ReductionFusion(),
                new Verifier(),
                new BufferPlanning());
    }

    /** This pipeline's passes followed by {@code more}. */
    public Pipeline then(Pass... more) {
        List<Pass> all = new ArrayList<>(passes);
        all.addAll(List.of(more));
        return new Pipeline(all);
    }

    public List<Pass> passes() {
        return passes;
    }

    /** Runs every pass on {@code m} in place, reporting each stage to {@code listener}, and returns {@code m}. */
    public Module run(Module m, StageListener listener) {
        String dir = System.getenv(DUMP_ENV);
        StageListener all = dir == null || dir.isBlank() ? listener
                : listener.andThen(StageListener.toDirectory(Path.of(dir)));
        report(all, "lowered", m);
        for (Pass p : passes) {
            p.run(m);
            report(all, p.name(), m);
        }
        return m;
    }

    private static void report(StageListener listener, String stage, Module m) {
        if (listener != StageListener.NONE) {
            listener.stage(stage, m.toMlir());
        }
    }
}
