package dev.weft.lowering;

/**
 * A contributor of lowering rules, found through {@link java.util.ServiceLoader} (list implementations in
 * {@code META-INF/services/dev.weft.lowering.LoweringRuleProvider}). Each primitive's rules live with the module
 * that implements them, so adding a primitive never edits a central switch.
 */
public interface LoweringRuleProvider {
    void register(LoweringRules rules);
}
