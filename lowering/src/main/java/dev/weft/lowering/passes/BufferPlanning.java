package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The {@code plan-buffers} pass: sets {@code weft.last_use = array<i64: ...>} on every op of every block to the
 * operand indices whose value no later op of the block uses, nor the terminator (uses inside an op's regions
 * count as uses by that op). Only values of the block itself (its arguments and results of its ops) are
 * listed: a value from an enclosing block outlives a nested block, which may run many times. A value appearing
 * twice among an op's operands is listed once, at its first index, so that it is released once. The executor
 * decides never to release arguments and results of the function.
 */
public final class BufferPlanning implements Pass {
    @Override
    public String name() {
        return "plan-buffers";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            plan(f.body());
        }
    }

    private static void plan(Block b) {
        Set<Value> local = identitySet();
        local.addAll(b.arguments());
        b.ops().forEach(op -> local.addAll(op.results()));
        Set<Value> usedLater = identitySet();
        for (int k = b.ops().size() - 1; k >= 0; k--) {
            Op op = b.ops().get(k);
            Set<Value> used = identitySet();
            op.collectUses(used);
            List<Long> last = new ArrayList<>();
            Set<Value> listed = identitySet();
            for (int i = 0; i < op.operands().size(); i++) {
                Value v = op.operand(i);
                if (local.contains(v) && !usedLater.contains(v) && listed.add(v)) {
                    last.add((long) i);
                }
            }
            op.attributes().put(StableHlo.LAST_USE, new Attr.I64Array(last));
            usedLater.addAll(used);
            op.regions().forEach(BufferPlanning::plan);
        }
    }

    private static Set<Value> identitySet() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }
}
