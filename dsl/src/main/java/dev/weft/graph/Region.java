package dev.weft.graph;

import java.util.List;

/** A straight-line list of nodes with parameters and results: the body of a graph, loop or branch. */
public record Region(List<Var> params, List<Node> nodes, List<Var> results) {
    public Region {
        params = List.copyOf(params);
        nodes = List.copyOf(nodes);
        results = List.copyOf(results);
    }

    /** Indented text, one node a line, nested regions inside braces. */
    public void print(StringBuilder b, String indent) {
        b.append(indent).append("params ").append(params).append('\n');
        for (Node n : nodes) {
            b.append(indent).append(n).append('\n');
            for (Region r : n.regions()) {
                b.append(indent).append("{\n");
                r.print(b, indent + "  ");
                b.append(indent).append("}\n");
            }
        }
        b.append(indent).append("return ").append(results).append('\n');
    }
}
