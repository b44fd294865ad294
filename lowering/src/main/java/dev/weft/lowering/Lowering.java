package dev.weft.lowering;

import dev.weft.graph.Graph;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.StageListener;

/** The entry point of backends: graph to final lowered module with the discovered rules and the standard passes. */
public final class Lowering {
    private Lowering() {
    }

    /** Rules of every provider on the class path, discovered once. */
    private static final class Discovered {
        static final LoweringRules RULES = LoweringRules.discover();
    }

    /**
     * Lowers {@code graph} for {@code target} ({@code "cpu"} or {@code "gpu"}) with the rules of every
     * {@link LoweringRuleProvider} on the class path, then runs {@link Pipeline#standard()}, reporting each stage
     * to {@code listener} (use {@link StageListener#NONE} for none).
     */
    public static Module lower(Graph graph, String target, StageListener listener) {
        return lower(graph, target, Discovered.RULES, Pipeline.standard(), listener);
    }

    /** Lowers {@code graph} with {@code rules}, then runs {@code pipeline}. */
    public static Module lower(Graph graph, String target, LoweringRules rules, Pipeline pipeline,
                               StageListener listener) {
        return pipeline.run(new Lowerer(rules).lower(graph, target), listener);
    }
}
