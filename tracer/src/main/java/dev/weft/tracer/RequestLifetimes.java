package dev.weft.tracer;

import dev.weft.WeftException;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Checks that every request ({@code isend}/{@code irecv}, a nonblocking collective) is completed by exactly one {@code wait} in the region
 * that started it: not never, not twice, not inside a nested loop or branch (which could run it zero or many
 * times), not returned. Errors name the line that started the request.
 */
final class RequestLifetimes {
    private RequestLifetimes() {
    }

    static void check(Graph graph) {
        check(graph.body());
    }

    private static void check(Region region) {
        Map<Var, Node> started = new IdentityHashMap<>();
        Map<Var, Integer> waits = new HashMap<>();
        for (Node n : region.nodes()) {
            for (Var in : n.inputs()) {
                Node origin = started.get(in);
                if (origin == null) {
                    continue;
                }
                if (n.prim() != CommPrims.WAIT && n.prim() != CommPrims.WAIT_COLLECTIVE) {
                    throw new WeftException(origin.location(), "the request started here is used by "
                            + n.prim().name() + " at " + n.location() + "; complete it with wait in the same"
                            + " loop body or branch where it was started");
                }
                if (waits.merge(in, 1, Integer::sum) > 1) {
                    throw new WeftException(n.location(), "the request started at " + origin.location()
                            + " is waited twice");
                }
            }
            if (n.prim() == CommPrims.ISEND || n.prim() == CommPrims.IRECV
                    || n.params() instanceof CommOp.CollectiveStart) {
                started.put(n.outputs().getFirst(), n);
            }
            n.regions().forEach(RequestLifetimes::check);
        }
        for (Var out : region.results()) {
            Node origin = started.get(out);
            if (origin != null) {
                throw new WeftException(origin.location(),
                        "the request started here escapes its @Compile method, loop body or branch");
            }
        }
        for (Map.Entry<Var, Node> e : started.entrySet()) {
            if (!waits.containsKey(e.getKey())) {
                throw new WeftException(e.getValue().location(), "the request started here ("
                        + e.getValue().prim().name() + ") is never waited; complete it with Comm.wait before the"
                        + " @Compile method, loop body or branch ends");
            }
        }
    }
}
