package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.graph.Graph;
import dev.weft.graph.RegionTrace;
import dev.weft.graph.Var;
import dev.weft.graph.VarIds;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.List;

/**
 * Records one program into a {@link Graph}: the trace of its body region, whose parameters are the program's
 * tensor arguments. Concrete tensors become constants; a traced tensor of another trace is an error (the program
 * takes it as an argument instead). {@code fori} and {@code cond} arrive as primitives whose params hold the closed
 * regions that {@link RegionTrace}s of their own recorded, numbered on from this trace's variables.
 *
 * <p>Not thread-safe: one instance traces one graph on one thread.
 */
final class TraceInterpreter extends RegionTrace {
    /** The communicators whose rank or size the program read, by identity, in order of first read. */
    private final List<CommHandle> commsRead = new ArrayList<>();

    TraceInterpreter(List<Aval> inputs) {
        super(new VarIds(), inputs, SourceLocation.UNKNOWN);
    }

    @Override
    public void readComm(CommHandle comm) {
        if (commsRead.stream().noneMatch(c -> c == comm)) {
            commsRead.add(comm);
        }
    }

    @Override
    protected Var foreign(Tensor t, Traced traced, SourceLocation loc) {
        throw new TracedValueException(loc.isUnknown() ? SourceLocation.capture() : loc, "a traced tensor "
                + traced.aval() + " of another trace is used here; pass it as an argument");
    }

    /** The graph recorded so far with {@code results} as its results. */
    Graph graph(String name, List<Tensor> results) {
        close(results);
        return new Graph(name, region(), commsRead);
    }
}
