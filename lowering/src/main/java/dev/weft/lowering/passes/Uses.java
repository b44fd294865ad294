package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.Value;
import java.util.IdentityHashMap;
import java.util.Map;

/** Use counts of values and substitution of values, over a block and every block nested in it. */
public final class Uses {
    private final Map<Value, Integer> counts = new IdentityHashMap<>();

    private Uses() {
    }

    /** Counts every operand use in {@code root}, nested regions included. */
    public static Uses of(Block root) {
        Uses u = new Uses();
        IrWalk.forEachOp(root, op -> u.add(op, 1));
        return u;
    }

    /** Counts {@code op}'s operand uses and those inside its regions. */
    static Uses of(Op op) {
        Uses u = new Uses();
        IrWalk.forEachOp(op, o -> u.add(o, 1));
        return u;
    }

    public int count(Value v) {
        return counts.getOrDefault(v, 0);
    }

    boolean isUsed(Value v) {
        return count(v) > 0;
    }

    /** Forgets the uses made by {@code op} and its regions (when it is erased). */
    void remove(Op op) {
        IrWalk.forEachOp(op, o -> add(o, -1));
    }

    private void add(Op op, int delta) {
        for (Value v : op.operands()) {
            counts.merge(v, delta, Integer::sum);
        }
    }

    /** Rewrites the operands of {@code op} and of every op in its regions through {@code substitution}. */
    static void replace(Op op, Map<Value, Value> substitution) {
        IrWalk.forEachOp(op, o -> o.operands().replaceAll(v -> substitution.getOrDefault(v, v)));
    }
}
