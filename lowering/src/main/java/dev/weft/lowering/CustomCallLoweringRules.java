package dev.weft.lowering;

import static dev.weft.lowering.LoweringRules.ANY_TARGET;

import dev.weft.graph.Node;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.Prims;
import java.util.List;

/**
 * Rules for the functions with custom differentiation rules ({@link Prims#CUSTOM_JVP_CALL},
 * {@link Prims#CUSTOM_VJP_CALL}): their rules were applied when the program was traced, so lowered they are their
 * body, inlined.
 */
public final class CustomCallLoweringRules implements LoweringRuleProvider {
    @Override
    public void register(LoweringRules rules) {
        rules.register(Prims.CUSTOM_JVP_CALL, ANY_TARGET, CustomCallLoweringRules::inline);
        rules.register(Prims.CUSTOM_VJP_CALL, ANY_TARGET, CustomCallLoweringRules::inline);
    }

    private static List<Value> inline(LoweringContext ctx, Node node, List<Value> in) {
        return ctx.lowerRegion(((CustomCallParams) node.params()).body(), in);
    }
}
