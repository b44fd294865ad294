package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code overlap-comm} pass: in every block, moves each start of a nonblocking operation (a nonblocking
 * collective, {@code isend}, {@code irecv}) as early and each wait as late as its data allow, so that the
 * computation between them, which an executor runs while the transfer progresses, is as large as it can be. A start
 * moves up past ops that do not define its operands, a wait down past ops that do not use its results; neither
 * passes an op with an effect ({@link Effects#hasEffect}: communication, whose order the token chains fix) nor a
 * terminator, so the ranks' communication runs in the order the program gave.
 */
public final class OverlapCommunication implements Pass {
    @Override
    public String name() {
        return "overlap-comm";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            schedule(f.body());
        }
    }

    private static void schedule(Block b) {
        List<Op> ops = b.ops();
        for (Op op : ops) {
            for (Block r : op.regions()) {
                schedule(r);
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (isStart(op)) {
                int j = i;
                while (j > 0 && mayPassAbove(ops.get(j - 1), op)) {
                    j--;
                }
                ops.add(j, ops.remove(i));
            }
        }
        for (int i = ops.size() - 1; i >= 0; i--) {
            Op op = ops.get(i);
            if (isWait(op)) {
                int j = i;
                while (j + 1 < ops.size() && mayPassBelow(ops.get(j + 1), op)) {
                    j++;
                }
                ops.add(j, ops.remove(i));
            }
        }
    }

    private static boolean mayPassAbove(Op earlier, Op start) {
        return !Effects.hasEffect(earlier) && !Effects.isTerminator(earlier)
                && earlier.results().stream().noneMatch(start.operands()::contains);
    }

    private static boolean mayPassBelow(Op later, Op wait) {
        if (Effects.hasEffect(later) || Effects.isTerminator(later)) {
            return false;
        }
        Set<Value> used = new HashSet<>();
        later.collectUses(used);
        return wait.results().stream().noneMatch(used::contains);
    }

    private static boolean isStart(Op op) {
        CommOp c = comm(op);
        return c instanceof CommOp.CollectiveStart || c instanceof CommOp.Start;
    }

    private static boolean isWait(Op op) {
        CommOp c = comm(op);
        return c instanceof CommOp.CollectiveWait || c instanceof CommOp.Wait;
    }

    private static CommOp comm(Op op) {
        return op.attr("backend_config") instanceof Attr.CommConfig c ? c.op() : null;
    }
}
