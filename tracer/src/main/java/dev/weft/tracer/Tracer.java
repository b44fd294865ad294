package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.graph.Graph;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreters;
import java.util.List;
import java.util.function.Function;

/** Records a function of tensors as a {@link Graph}. */
public final class Tracer {
    private Tracer() {
    }

    /**
     * Runs {@code body} once on traced tensors of {@code inputs}' avals, with a fresh {@link TraceInterpreter}
     * innermost on this thread, and returns what it recorded: the graph's parameters are the inputs in order, its
     * results the tensors {@code body} returns (inputs and concrete tensors included). Control flow with a known
     * outcome is folded ({@link ControlFlowFolding}) and request lifetimes are checked ({@link RequestLifetimes}).
     * Exceptions from {@code body} propagate unchanged.
     */
    public static Graph trace(String name, List<Aval> inputs, Function<List<Tensor>, List<Tensor>> body) {
        TraceInterpreter interp = new TraceInterpreter(inputs);
        List<Tensor> results = Interpreters.with(interp, () -> List.copyOf(body.apply(interp.params())));
        Graph graph = ControlFlowFolding.fold(interp.graph(name, results));
        RequestLifetimes.check(graph);
        return graph;
    }
}
