package dev.weft.lowering;

import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;

/** Builds graph regions by hand for tests; each node gets the location {@code Test.java:<its line>}. */
public final class GraphBuilder {
    private final int[] ids;
    private final List<Var> params = new ArrayList<>();
    private final List<Node> nodes = new ArrayList<>();
    private int line = 1;

    public GraphBuilder() {
        this(new int[1]);
    }

    private GraphBuilder(int[] ids) {
        this.ids = ids;
    }

    /** A builder for a nested region, sharing this one's variable numbering. */
    public GraphBuilder nested() {
        GraphBuilder b = new GraphBuilder(ids);
        b.line = line * 100;
        return b;
    }

    public static SourceLocation at(int line) {
        return new SourceLocation("Test", "body", "Test.java", line);
    }

    public Var param(Aval aval) {
        Var v = new Var(ids[0]++, aval);
        params.add(v);
        return v;
    }

    /** A node whose output avals come from the primitive's shape rule. */
    public Var op(Primitive<?> prim, Params p, Var... inputs) {
        List<Aval> outs = prim.infer(List.of(inputs).stream().map(Var::aval).toList(), p, null);
        return node(prim, p, List.of(inputs), outs).getFirst();
    }

    public Var op(Primitive<?> prim, Var... inputs) {
        return op(prim, Params.NONE, inputs);
    }

    /** A node with explicit outputs (control flow, whose params hold its regions). */
    public List<Var> node(Primitive<?> prim, Params p, List<Var> inputs, List<Aval> outs) {
        List<Var> outputs = outs.stream().map(a -> new Var(ids[0]++, a)).toList();
        nodes.add(new Node(prim, p, inputs, outputs, at(line++)));
        return outputs;
    }

    public Region region(Var... results) {
        return new Region(params, nodes, List.of(results));
    }

    public Graph graph(Var... results) {
        return new Graph("test", region(results));
    }
}
