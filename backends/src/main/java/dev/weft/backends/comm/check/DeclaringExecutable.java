package dev.weft.backends.comm.check;

import dev.weft.Tensor;
import dev.weft.backends.comm.Communicator;
import dev.weft.graph.Graph;
import dev.weft.tracer.Executable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A compiled program that, at each run, declares to the check of each communicator the collectives it runs there
 * for sure ({@link Declaration}), so that the ranks check them in one exchange rather than one each.
 */
public final class DeclaringExecutable implements Executable {
    private final Executable inner;
    private final Map<CommCheck, Declaration> declarations;

    private DeclaringExecutable(Executable inner, Map<CommCheck, Declaration> declarations) {
        this.inner = inner;
        this.declarations = declarations;
    }

    /** {@code exe}, the executable of {@code graph}, declaring; itself when it runs no collective for sure. */
    public static Executable of(Executable exe, Graph graph) {
        Map<Communicator, Declaration> byComm = Declaration.of(graph);
        if (byComm.isEmpty()) {
            return exe;
        }
        Map<CommCheck, Declaration> checks = new LinkedHashMap<>();
        byComm.forEach((comm, d) -> checks.put(CommCheck.of(comm), d));
        return new DeclaringExecutable(exe, Map.copyOf(checks));
    }

    @Override
    public List<Tensor> run(List<Tensor> args) {
        declarations.forEach(CommCheck::declare);
        boolean failed = true;
        try {
            List<Tensor> out = inner.run(args);
            failed = false;
            return out;
        } finally {
            for (CommCheck c : declarations.keySet()) {
                c.endProgram(failed);
            }
        }
    }

    @Override
    public void close() {
        inner.close();
    }
}
