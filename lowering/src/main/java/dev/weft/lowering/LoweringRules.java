package dev.weft.lowering;

import dev.weft.WeftException;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The lowering table: one rule per (primitive, target name), where the name is a {@link Target#name()} or
 * {@link #ANY_TARGET}. Lookup prefers the target's own rule and falls back to the {@code "*"} rule.
 */
public final class LoweringRules {
    /** The target of rules that apply on every target. */
    public static final String ANY_TARGET = "*";

    private final Map<Primitive<?>, Map<String, LoweringRule>> rules = new IdentityHashMap<>();

    /** An empty table. */
    public LoweringRules() {
    }

    /** A table filled by every {@link LoweringRuleProvider} visible to this class's loader. */
    public static LoweringRules discover() {
        LoweringRules table = new LoweringRules();
        for (LoweringRuleProvider p : ServiceLoader.load(LoweringRuleProvider.class,
                LoweringRules.class.getClassLoader())) {
            p.register(table);
        }
        return table;
    }

    /**
     * Registers {@code rule} for {@code prim} on the target named {@code target} (or on {@link #ANY_TARGET}); a
     * second rule for the same pair is an error, since which of two providers would win is undefined.
     */
    public LoweringRules register(Primitive<?> prim, String target, LoweringRule rule) {
        LoweringRule old = rules.computeIfAbsent(prim, p -> new HashMap<>()).putIfAbsent(target, rule);
        if (old != null) {
            throw new IllegalStateException("two lowering rules for " + prim.name() + " on target " + target);
        }
        return this;
    }

    /** True if {@link #lookup} finds a rule. */
    public boolean has(Primitive<?> prim, Target target) {
        Map<String, LoweringRule> byTarget = rules.get(prim);
        return byTarget != null && (byTarget.containsKey(target.name()) || byTarget.containsKey(ANY_TARGET));
    }

    /**
     * The rule for {@code prim} on {@code target}, else its {@code "*"} rule.
     *
     * @throws WeftException at {@code where} when there is neither
     */
    public LoweringRule lookup(Primitive<?> prim, Target target, SourceLocation where) {
        Map<String, LoweringRule> byTarget = rules.getOrDefault(prim, Map.of());
        LoweringRule rule = byTarget.getOrDefault(target.name(), byTarget.get(ANY_TARGET));
        if (rule == null) {
            throw new WeftException(where, "no lowering rule for primitive '" + prim.name() + "' on target '"
                    + target.name() + "'");
        }
        return rule;
    }
}
