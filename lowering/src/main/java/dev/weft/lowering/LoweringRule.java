package dev.weft.lowering;

import dev.weft.graph.Node;
import dev.weft.lowering.ir.Value;
import java.util.List;

/**
 * Lowers one graph node on one target: emits ops through {@code ctx} into the current block and returns the
 * values of the node's outputs, in order and of the outputs' types.
 */
@FunctionalInterface
public interface LoweringRule {
    List<Value> lower(LoweringContext ctx, Node node, List<Value> operands);
}
