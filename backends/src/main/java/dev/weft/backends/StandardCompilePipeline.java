package dev.weft.backends;

import dev.weft.WeftException;
import dev.weft.backends.comm.check.ScheduleCheck;
import dev.weft.backends.comm.exec.CommCustomCalls;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.gpu.exec.GpuExecutable;
import dev.weft.backends.timeline.TimedExecutable;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.SourceLocation;
import dev.weft.tracer.CompilePipeline;
import dev.weft.tracer.Executable;

/**
 * Lowers a traced graph with the standard pipeline for the target and prepares it to run: on the CPU executor
 * for {@code cpu}, on the GPU executor for {@code gpu} (which fails, rather than falling back to the CPU, when
 * there is no usable CUDA device). Before returning the executable, the ranks of each communicator it uses check
 * that they agree on its communication schedule ({@link ScheduleCheck}), so its first run cannot mismatch. Runs
 * are timed while a {@code WEFT_TIMELINE} is recorded.
 */
public final class StandardCompilePipeline implements CompilePipeline {
    @Override
    public Executable compile(Graph graph, String target) {
        Executable exe = prepare(graph, target);
        try {
            ScheduleCheck.beforeFirstRun(graph);
        } catch (RuntimeException e) {
            exe.close();
            throw e;
        }
        return exe;
    }

    private static Executable prepare(Graph graph, String target) {
        return TimedExecutable.of(graph.name(), switch (target) {
            case "cpu" -> {
                Module module = Lowering.lower(graph, target, StageListener.NONE);
                yield new CpuExecutable(module, CommCustomCalls.registry(module));
            }
            case "gpu" -> new GpuExecutable(Lowering.lower(graph, target, StageListener.NONE));
            default -> throw new WeftException(SourceLocation.UNKNOWN, "unknown target '" + target
                    + "'; the targets are 'cpu' and 'gpu'");
        });
    }
}
