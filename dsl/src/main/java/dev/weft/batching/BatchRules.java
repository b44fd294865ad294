package dev.weft.batching;

import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The batching rule of every primitive, by primitive, or the reason it needs none. The array primitives' rules are
 * registered together in {@link ArrayBatchRules}, the communication primitives' in {@link CommBatchRules},
 * {@code fori}'s and {@code cond}'s in {@link ControlFlowBatchRules}; a coverage test requires every primitive to
 * have a rule or a reason.
 */
public final class BatchRules {
    private static final Map<Primitive<?>, BatchRule<?>> RULES = new ConcurrentHashMap<>();
    private static final Set<Primitive<?>> EVERY_APPLICATION = ConcurrentHashMap.newKeySet();
    private static final Map<Primitive<?>, String> UNBATCHED = new ConcurrentHashMap<>();

    private BatchRules() {
    }

    /** Registers the built-in rules at the first lookup, so that a program that never batches builds none. */
    private static final class Builtin {
        static {
            ArrayBatchRules.register();
            CommBatchRules.register();
            ControlFlowBatchRules.register();
        }

        /** Does nothing: calling it initialises this class, which happens once. */
        static void ensure() {
        }
    }

    /** Registers {@code prim}'s rule, applied where an operand is batched. */
    static <P extends Params> void rule(Primitive<P> prim, BatchRule<P> rule) {
        RULES.put(prim, rule);
    }

    /**
     * Registers {@code prim}'s rule, applied to every application under a batch level, batched operands or not: a
     * point-to-point message, whose receiver must know its size without seeing the sender's operand.
     */
    static <P extends Params> void everyApplication(Primitive<P> prim, BatchRule<P> rule) {
        RULES.put(prim, rule);
        EVERY_APPLICATION.add(prim);
    }

    /** Marks {@code prim} as never having a batched operand, saying why (it has no operands, say). */
    static void unbatched(Primitive<?> prim, String why) {
        UNBATCHED.put(prim, why);
    }

    @SuppressWarnings("unchecked")
    static <P extends Params> Optional<BatchRule<P>> rule(Primitive<P> prim) {
        Builtin.ensure();
        return Optional.ofNullable((BatchRule<P>) RULES.get(prim));
    }

    static boolean batchesEveryApplication(Primitive<?> prim) {
        Builtin.ensure();
        return EVERY_APPLICATION.contains(prim);
    }

    /** True if {@code prim} has a batching rule. */
    public static boolean hasRule(Primitive<?> prim) {
        Builtin.ensure();
        return RULES.containsKey(prim);
    }

    /** Why {@code prim} needs no batching rule, if it is marked so. */
    public static Optional<String> whyUnbatched(Primitive<?> prim) {
        Builtin.ensure();
        return Optional.ofNullable(UNBATCHED.get(prim));
    }
}
