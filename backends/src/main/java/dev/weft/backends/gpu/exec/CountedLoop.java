package dev.weft.backends.gpu.exec;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.ValueLayout;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Recognises a {@code stablehlo.while} whose trip count is known when it is planned: the form {@code Weft.fori}
 * lowers to, where carry 0 starts at an i32 constant {@code lo}, the condition is exactly {@code carry0 < hi} for an
 * i32 constant {@code hi}, and the body's first result is {@code carry0 + 1}. Such a loop runs {@code max(0, hi -
 * lo)} times whatever the data, so the executor never needs to read its predicate back from the device. Values are
 * followed through fusion regions, one-element broadcasts and reshapes; a condition holding anything that could
 * have an effect (a custom call, nested control flow) is never skipped.
 */
final class CountedLoop {
    private static final Set<String> PURE = Set.of(StableHlo.CONSTANT, StableHlo.BROADCAST_IN_DIM, StableHlo.RESHAPE,
            StableHlo.FUSION);

    private final Map<Value, Op> definers = new IdentityHashMap<>();
    private final Map<Value, Value> fusionArguments = new IdentityHashMap<>();

    private CountedLoop(Map<Value, Op> outer) {
        definers.putAll(outer);
    }

    /**
     * The trip count of {@code loop}, a {@code stablehlo.while}, when it is a counted loop; {@code outer} maps the
     * values defined outside the loop to their ops.
     */
    static OptionalLong trips(Op loop, Map<Value, Op> outer) {
        if (loop.operands().isEmpty()) {
            return OptionalLong.empty();
        }
        CountedLoop c = new CountedLoop(outer);
        Block cond = loop.regions().get(0), body = loop.regions().get(1);
        c.index(cond);
        c.index(body);
        if (!c.pure(cond)) {
            return OptionalLong.empty();
        }
        OptionalLong lo = c.i32Constant(loop.operand(0));
        Op compare = c.definer(cond.results().getFirst());
        Op step = c.definer(body.results().getFirst());
        if (lo.isEmpty() || compare == null || step == null || compare.elementwise() != ElementwiseOp.LT
                || !(compare.attr("comparison_direction") instanceof Attr.Enum dir) || !dir.value().equals("LT")
                || compare.attr("compare_type") instanceof Attr.Enum type && !type.value().equals("SIGNED")
                || c.resolve(compare.operand(0)) != cond.arguments().getFirst()
                || step.elementwise() != ElementwiseOp.ADD) {
            return OptionalLong.empty();
        }
        OptionalLong hi = c.i32Constant(compare.operand(1));
        Value counter = body.arguments().getFirst();
        boolean increments = c.resolve(step.operand(0)) == counter && c.isOne(step.operand(1))
                || c.resolve(step.operand(1)) == counter && c.isOne(step.operand(0));
        if (hi.isEmpty() || !increments) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Math.max(0, hi.getAsLong() - lo.getAsLong()));
    }

    private void index(Block b) {
        for (Op op : b.ops()) {
            op.results().forEach(v -> definers.put(v, op));
            if (op.name().equals(StableHlo.FUSION)) {
                Block region = op.regions().getFirst();
                for (int k = 0; k < op.operands().size(); k++) {
                    fusionArguments.put(region.arguments().get(k), op.operand(k));
                }
            }
            op.regions().forEach(this::index);
        }
    }

    private boolean pure(Block b) {
        for (Op op : b.ops().subList(0, b.ops().size() - 1)) {
            if (!PURE.contains(op.name()) && op.elementwise() == null
                    || op.name().equals(StableHlo.FUSION) && !pure(op.regions().getFirst())) {
                return false;
            }
        }
        return true;
    }

    /** The value {@code v} stands for, through fusion boundaries and one-element broadcasts and reshapes. */
    private Value resolve(Value v) {
        while (true) {
            Value outside = fusionArguments.get(v);
            if (outside != null) {
                v = outside;
                continue;
            }
            Op op = definers.get(v);
            if (op == null) {
                return v;
            }
            if (op.name().equals(StableHlo.FUSION)) {
                v = op.regions().getFirst().results().get(op.results().indexOf(v));
            } else if ((op.name().equals(StableHlo.BROADCAST_IN_DIM) || op.name().equals(StableHlo.RESHAPE))
                    && op.operand(0).type() instanceof TensorType t && t.shape().size() == 1) {
                v = op.operand(0);
            } else {
                return v;
            }
        }
    }

    private Op definer(Value v) {
        return definers.get(resolve(v));
    }

    /** The value of {@code v} when it is an i32 constant whose elements all hold it. */
    private OptionalLong i32Constant(Value v) {
        Op op = definer(v);
        if (op == null || !op.name().equals(StableHlo.CONSTANT) || !(op.attr("value") instanceof Attr.Dense d)
                || d.type().dtype() != DType.I32 || d.type().shape().size() < 1) {
            return OptionalLong.empty();
        }
        int first = d.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0);
        for (long k = 1; k < d.type().shape().size(); k++) {
            if (d.data().get(ValueLayout.JAVA_INT_UNALIGNED, 4 * k) != first) {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.of(first);
    }

    private boolean isOne(Value v) {
        OptionalLong c = i32Constant(v);
        return c.isPresent() && c.getAsLong() == 1;
    }
}
