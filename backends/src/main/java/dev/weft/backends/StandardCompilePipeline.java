package dev.weft.backends;

import dev.weft.backends.cache.PersistentCompileCache;
import dev.weft.backends.comm.check.DeclaringExecutable;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.backends.timeline.TimedExecutable;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.StageListener;
import dev.weft.prim.CommPrims;
import dev.weft.tracer.CompilePipeline;
import dev.weft.tracer.Executable;
import java.util.Objects;

/**
 * Lowers a traced graph for the named {@link Target} (found in {@link Targets}), runs the target's pipeline and
 * prepares the result on the target's executor, bound to the communicators the graph's ops ran on while tracing.
 * The pipeline's result comes from the {@link PersistentCompileCache} when an earlier process compiled the same
 * module. Each run declares the collectives it runs for sure to the schedule check ({@link DeclaringExecutable}),
 * and is timed while a {@code WEFT_TIMELINE} is recorded.
 */
public final class StandardCompilePipeline implements CompilePipeline {
    @Override
    public String defaultTarget() {
        return CpuTarget.NAME;
    }

    /** The persistent cache to use, or null for the one the settings choose at each compile. */
    private final PersistentCompileCache cache;

    /** The pipeline of {@code ServiceLoader}: its persistent cache is {@link PersistentCompileCache#configured}. */
    public StandardCompilePipeline() {
        this.cache = null;
    }

    /** A pipeline whose persistent cache is {@code cache} whatever the settings say. */
    public StandardCompilePipeline(PersistentCompileCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
    }

    @Override
    public Executable compile(Graph graph, String targetName) {
        Target target = Targets.named(targetName);
        Module lowered = Lowering.lowerOnly(graph, target);
        target.lowered(lowered);
        PersistentCompileCache persistent = cache != null ? cache : PersistentCompileCache.configured();
        Module optimized = persistent != null ? persistent.optimize(lowered)
                : target.pipeline().run(lowered, StageListener.NONE);
        return DeclaringExecutable.of(TimedExecutable.of(graph.name(), target.executable(optimized,
                CommPrims.bindings(graph.body()))), graph);
    }
}
