package dev.weft.backends;

import dev.weft.backends.comm.check.DeclaringExecutable;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.backends.timeline.TimedExecutable;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.lowering.passes.StageListener;
import dev.weft.prim.CommPrims;
import dev.weft.tracer.CompilePipeline;
import dev.weft.tracer.Executable;

/**
 * Lowers a traced graph for the named {@link Target} (found in {@link Targets}), runs the target's pipeline and
 * prepares the result on the target's executor, bound to the communicators the graph's ops ran on while tracing. Each run declares the collectives it runs for sure to the schedule
 * check ({@link DeclaringExecutable}), and is timed while a {@code WEFT_TIMELINE} is recorded.
 */
public final class StandardCompilePipeline implements CompilePipeline {
    @Override
    public String defaultTarget() {
        return CpuTarget.NAME;
    }

    @Override
    public Executable compile(Graph graph, String targetName) {
        Target target = Targets.named(targetName);
        return DeclaringExecutable.of(TimedExecutable.of(graph.name(), target.executable(
                Lowering.lower(graph, target, StageListener.NONE), CommPrims.bindings(graph.body()))), graph);
    }
}
