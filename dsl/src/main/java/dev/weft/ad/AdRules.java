package dev.weft.ad;

import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The differentiation rules of every primitive, by primitive: a {@link JvpRule} (a {@link JointJvpRule} for control
 * flow), a {@link TransposeRule} for the primitives that appear linearly in tangents, or a reason it is not
 * differentiable. The array primitives'
 * rules are registered together in {@link ArrayAdRules}, the communication primitives' in {@link CommAdRules},
 * {@code fori}'s and {@code cond}'s in {@link ControlFlowAdRules}, the custom functions' in {@link CustomAdRules}; a
 * coverage test requires every primitive to have a JVP
 * rule or a reason.
 */
public final class AdRules {
    private static final Map<Primitive<?>, JvpRule<?>> JVP = new ConcurrentHashMap<>();
    private static final Map<Primitive<?>, JointJvpRule<?>> JOINT_JVP = new ConcurrentHashMap<>();
    private static final Map<Primitive<?>, TransposeRule<?>> TRANSPOSE = new ConcurrentHashMap<>();
    private static final Map<Primitive<?>, String> NOT_DIFFERENTIABLE = new ConcurrentHashMap<>();
    private static final Map<Primitive<?>, VarianceRule<?>> VARIANCE = new ConcurrentHashMap<>();

    private AdRules() {
    }

    /**
     * Registers the built-in rules when initialised: at the first lookup, not when another table (sharding's)
     * registers its own rule, so that a program that never differentiates does not build ~75 lambdas at its first
     * compile.
     */
    private static final class Builtin {
        static {
            ArrayAdRules.register();
            CommAdRules.register();
            ControlFlowAdRules.register();
            CustomAdRules.register();
        }

        /** Does nothing: calling it initialises this class, which happens once. */
        static void ensure() {
        }
    }

    /** Registers {@code prim}'s forward-mode rule. */
    public static <P extends Params> void jvp(Primitive<P> prim, JvpRule<P> rule) {
        JVP.put(prim, rule);
    }

    /** Registers {@code prim}'s forward-mode rule that computes its outputs with their tangents (control flow). */
    static <P extends Params> void jointJvp(Primitive<P> prim, JointJvpRule<P> rule) {
        JOINT_JVP.put(prim, rule);
    }

    /** Registers {@code prim}'s transpose (for primitives that are linear in some inputs). */
    public static <P extends Params> void transpose(Primitive<P> prim, TransposeRule<P> rule) {
        TRANSPOSE.put(prim, rule);
    }

    /** Marks {@code prim} as having no derivative, saying why (an integer result, say). */
    public static void notDifferentiable(Primitive<?> prim, String why) {
        NOT_DIFFERENTIABLE.put(prim, why);
    }

    /** Registers how {@code prim} types values across ranks, where it is not the same function on every rank. */
    static <P extends Params> void variance(Primitive<P> prim, VarianceRule<P> rule) {
        VARIANCE.put(prim, rule);
    }

    /** The typing across ranks of {@code prim} applied with {@code params} to operands of {@code operands}. */
    @SuppressWarnings("unchecked")
    static <P extends Params> VarianceRule.Typing typing(Primitive<P> prim, Params params, List<Variance> operands,
                                                         int outputs) {
        Builtin.ensure();
        VarianceRule<P> rule = (VarianceRule<P>) VARIANCE.get(prim);
        return rule != null ? rule.typing(prim.paramsType().cast(params), operands, outputs)
                : VarianceRule.Typing.uniform(VarianceRule.meet(operands), outputs);
    }

    @SuppressWarnings("unchecked")
    static <P extends Params> Optional<JvpRule<P>> jvpRule(Primitive<P> prim) {
        Builtin.ensure();
        return Optional.ofNullable((JvpRule<P>) JVP.get(prim));
    }

    @SuppressWarnings("unchecked")
    static <P extends Params> Optional<JointJvpRule<P>> jointJvpRule(Primitive<P> prim) {
        Builtin.ensure();
        return Optional.ofNullable((JointJvpRule<P>) JOINT_JVP.get(prim));
    }

    @SuppressWarnings("unchecked")
    static <P extends Params> Optional<TransposeRule<P>> transposeRule(Primitive<P> prim) {
        Builtin.ensure();
        return Optional.ofNullable((TransposeRule<P>) TRANSPOSE.get(prim));
    }

    /** Why {@code prim} is not differentiable, if it is marked so. */
    public static Optional<String> whyNotDifferentiable(Primitive<?> prim) {
        Builtin.ensure();
        return Optional.ofNullable(NOT_DIFFERENTIABLE.get(prim));
    }

    /** True if {@code prim} has a forward-mode rule (of either kind). */
    public static boolean hasJvp(Primitive<?> prim) {
        Builtin.ensure();
        return JVP.containsKey(prim) || JOINT_JVP.containsKey(prim);
    }

    /** True if {@code prim} has a transpose rule. */
    public static boolean hasTranspose(Primitive<?> prim) {
        Builtin.ensure();
        return TRANSPOSE.containsKey(prim);
    }
}
