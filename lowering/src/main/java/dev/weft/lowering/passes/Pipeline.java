package dev.weft.lowering.passes;

import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import dev.weft.lowering.ir.Module;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An ordered list of passes: the script a {@link dev.weft.lowering.Target} runs on the modules lowered for it.
 * {@link #run} reports the module's text to a {@link StageListener} after lowering (stage {@code lowered}) and
 * after each pass; when the environment variable {@code WEFT_DUMP} names a directory, every stage is also written
 * there as {@code NN-<stage>.mlir}.
 */
public final class Pipeline {
    private final List<Pass> passes;

    private Pipeline(List<Pass> passes) {
        this.passes = List.copyOf(passes);
    }

    /** The pipeline running {@code passes} in this order. */
    public static Pipeline of(Pass... passes) {
        return new Pipeline(List.of(passes));
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
        String dir = Setting.DUMP.text();
        StageListener all = dir == null ? listener
                : listener.andThen(StageListener.toDirectory(new OutputDirectory(Path.of(dir),
                        Setting.DUMP.setBy())));
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
