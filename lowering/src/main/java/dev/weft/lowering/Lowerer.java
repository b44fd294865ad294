package dev.weft.lowering;

import dev.weft.graph.Graph;
import dev.weft.graph.Var;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.List;
import java.util.Map;

/** Turns a graph into a lowered module by applying one lowering rule per node. */
public final class Lowerer {
    private final LoweringRules rules;

    public Lowerer(LoweringRules rules) {
        this.rules = rules;
    }

    /**
     * {@code func.func @main} whose arguments are the graph body's parameters and which ends in
     * {@code func.return} of the graph's results, lowered with the rules of {@code target}.
     */
    public Module lower(Graph graph, Target target) {
        return lower(graph, target, "main");
    }

    /** As {@link #lower(Graph, Target)}, naming the function {@code name}. */
    public Module lower(Graph graph, Target target, String name) {
        Block body = Block.withArgs(graph.body().params().stream().map(Var::aval).map(TensorType::of).toList());
        Module module = new Module(target.name(), List.of(new Func(name, body)));
        LoweringContext ctx = new LoweringContext(rules, target, module, body);
        List<Value> results = ctx.lowerRegion(graph.body(), body.arguments());
        ctx.emit(StableHlo.FUNC_RETURN, results, List.of(), Map.of(), List.of());
        return module;
    }
}
