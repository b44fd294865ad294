package dev.weft.lowering;

import dev.weft.graph.Graph;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.StageListener;

/** The entry point of backends: graph to final lowered module with the discovered rules and the target's passes. */
public final class Lowering {
    private Lowering() {
    }

    /** Rules of every provider on the class path, discovered once. */
    private static final class Discovered {
        static final LoweringRules RULES = LoweringRules.discover();
    }

    /**
     * Lowers {@code graph} for {@code target} with the rules of every {@link LoweringRuleProvider} on the class
     * path, then runs the target's {@link Target#pipeline()}, reporting each stage to {@code listener} (use
     * {@link StageListener#NONE} for none).
     */
    public static Module lower(Graph graph, Target target, StageListener listener) {
        return target.pipeline().run(lowerOnly(graph, target), listener);
    }

    /** {@code graph} lowered for {@code target} as {@link #lower} does, before the target's pipeline. */
    public static Module lowerOnly(Graph graph, Target target) {
        return new Lowerer(Discovered.RULES).lower(graph, target);
    }
}
