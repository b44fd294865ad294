package dev.weft.backends;

import dev.weft.WeftException;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.comm.exec.CommCustomCalls;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.SourceLocation;
import dev.weft.tracer.CompilePipeline;
import dev.weft.tracer.Executable;
import dev.weft.tracer.ir.Graph;

/** Lowers a traced graph with the standard pipeline and runs the module on the CPU executor. */
public final class CpuCompilePipeline implements CompilePipeline {
    @Override
    public Executable compile(Graph graph, String target) {
        if (!target.equals("cpu")) {
            throw new WeftException(SourceLocation.UNKNOWN, "target '" + target + "' is not available;"
                    + " this build runs compiled programs on 'cpu'");
        }
        Module module = Lowering.lower(graph, target, StageListener.NONE);
        return new CpuExecutable(module, CommCustomCalls.registry(module));
    }
}
