package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import java.util.ListIterator;

/**
 * The {@code dce} pass: erases ops whose results are all unused and that have no effect
 * ({@link Effects#hasEffect}), innermost regions included. One backward sweep per block suffices: erasing an op
 * releases its operands before their definitions are visited.
 */
public final class DeadCodeElimination implements Pass {
    @Override
    public String name() {
        return "dce";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            sweep(f.body(), Uses.of(f.body()));
        }
    }

    private static void sweep(Block b, Uses uses) {
        ListIterator<Op> it = b.ops().listIterator(b.ops().size());
        while (it.hasPrevious()) {
            Op op = it.previous();
            if (isDead(op, uses)) {
                uses.remove(op);
                it.remove();
            } else {
                for (Block r : op.regions()) {
                    sweep(r, uses);
                }
            }
        }
    }

    private static boolean isDead(Op op, Uses uses) {
        return !Effects.isTerminator(op) && !Effects.hasEffect(op) && op.results().stream().noneMatch(uses::isUsed);
    }
}
