package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The {@code cse} pass: within each block, an op equal to an earlier one (same name, operands, attributes and
 * result types) is erased and its results replaced by the earlier op's. Only pure, region-free ops take part:
 * never a {@code custom_call}, an op touching a token, or a terminator.
 */
public final class CommonSubexpressionElimination implements Pass {
    /** Operands compare by identity (values from enclosing blocks included), attributes by value. */
    private record Key(String name, List<IdentityOf> operands, Map<String, Attr> attributes, List<Type> types) {
    }

    private record IdentityOf(Value value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof IdentityOf other && other.value == value;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(value);
        }
    }

    @Override
    public String name() {
        return "cse";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Map<Value, Value> replaced = new IdentityHashMap<>();
            block(f.body(), replaced);
        }
    }

    /** Ops are visited in program order, so every use of a merged value is rewritten after its merge. */
    private static void block(Block b, Map<Value, Value> replaced) {
        Map<Key, Op> seen = new HashMap<>();
        for (Iterator<Op> it = b.ops().iterator(); it.hasNext(); ) {
            Op op = it.next();
            op.operands().replaceAll(v -> replaced.getOrDefault(v, v));
            for (Block r : op.regions()) {
                block(r, replaced);
            }
            if (!isMergeable(op)) {
                continue;
            }
            Key key = new Key(op.name(), op.operands().stream().map(IdentityOf::new).toList(), op.attributes(),
                    op.results().stream().map(Value::type).toList());
            Op earlier = seen.putIfAbsent(key, op);
            if (earlier != null) {
                for (int i = 0; i < op.results().size(); i++) {
                    replaced.put(op.results().get(i), earlier.results().get(i));
                }
                it.remove();
            }
        }
    }

    private static boolean isMergeable(Op op) {
        return op.regions().isEmpty() && !op.name().equals(StableHlo.CUSTOM_CALL) && !Effects.isTerminator(op)
                && !Effects.hasEffect(op);
    }
}
