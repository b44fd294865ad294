package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code overlap-comm} pass: in every block, moves each start of a nonblocking operation (a nonblocking
 * collective, {@code isend}, {@code irecv}) as early and each wait as late as its data allow, so that the
 * computation between them, which an executor runs while the transfer progresses, is as large as it can be. The
 * pure ops between a start and the previous op with an effect that the start does not depend on (directly or through
 * others) move after it; those between a wait and the next op with an effect that do not depend on its results move
 * before it. Nothing passes an op with an effect ({@link Effects#hasEffect}: communication, whose order the token
 * chains fix) or a terminator, so the ranks' communication runs in the order the program gave.
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
            if (isStart(ops.get(i))) {
                hoist(ops, i);
            }
        }
        for (int i = ops.size() - 1; i >= 0; i--) {
            if (isWait(ops.get(i))) {
                sink(ops, i);
            }
        }
    }

    /**
     * Moves the start at {@code i} above the pure ops before it (back to the previous op with an effect) that it
     * does not depend on, directly or through others; they follow it, in their order.
     */
    private static void hoist(List<Op> ops, int i) {
        int lo = i;
        while (lo > 0 && movable(ops.get(lo - 1))) {
            lo--;
        }
        Set<Value> needed = new HashSet<>();
        ops.get(i).collectUses(needed);
        List<Op> before = new ArrayList<>();
        List<Op> after = new ArrayList<>();
        for (int k = i - 1; k >= lo; k--) {
            Op op = ops.get(k);
            if (op.results().stream().anyMatch(needed::contains)) {
                op.collectUses(needed);
                before.addFirst(op);
            } else {
                after.addFirst(op);
            }
        }
        reorder(ops, lo, i, before, ops.get(i), after);
    }

    /**
     * Moves the wait at {@code i} below the pure ops after it (up to the next op with an effect or the terminator)
     * that do not depend on its results, directly or through others; they precede it, in their order.
     */
    private static void sink(List<Op> ops, int i) {
        int hi = i;
        while (hi + 1 < ops.size() && movable(ops.get(hi + 1))) {
            hi++;
        }
        Set<Value> tainted = new HashSet<>(ops.get(i).results());
        List<Op> before = new ArrayList<>();
        List<Op> after = new ArrayList<>();
        for (int k = i + 1; k <= hi; k++) {
            Op op = ops.get(k);
            Set<Value> used = new HashSet<>();
            op.collectUses(used);
            if (used.stream().anyMatch(tainted::contains)) {
                tainted.addAll(op.results());
                after.add(op);
            } else {
                before.add(op);
            }
        }
        reorder(ops, i, hi, before, ops.get(i), after);
    }

    /** Rewrites {@code ops[from..to]} (the other ops and {@code moved}) as {@code before}, {@code moved}, {@code after}. */
    private static void reorder(List<Op> ops, int from, int to, List<Op> before, Op moved, List<Op> after) {
        List<Op> range = ops.subList(from, to + 1);
        range.clear();
        range.addAll(before);
        range.add(moved);
        range.addAll(after);
    }

    /** An op a start or wait may move past: pure, not a terminator. */
    private static boolean movable(Op op) {
        return !Effects.hasEffect(op) && !Effects.isTerminator(op);
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
