package dev.weft.lowering.ir;

import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Visits the ops of a module, a block or an op, those nested in regions included, in pre-order: an op before the
 * ops of its regions, regions in order, and blocks in program order (so values are met at their definition before
 * their uses). The walk reads the op lists as it goes: a visitor may edit an op's operands or attributes, not the
 * lists of ops it walks (passes that insert or erase ops walk their blocks themselves).
 */
public final class IrWalk {
    private IrWalk() {
    }

    /** Every op of every function of {@code module}, functions in order. */
    public static void forEachOp(Module module, Consumer<Op> visit) {
        for (Func f : module.functions()) {
            forEachOp(f.body(), visit);
        }
    }

    /** Every op of {@code block} and of the blocks nested in it. */
    public static void forEachOp(Block block, Consumer<Op> visit) {
        for (Op op : block.ops()) {
            forEachOp(op, visit);
        }
    }

    /** {@code op} itself, then every op nested in its regions. */
    public static void forEachOp(Op op, Consumer<Op> visit) {
        visit.accept(op);
        for (Block region : op.regions()) {
            forEachOp(region, visit);
        }
    }

    /** The ops {@link #forEachOp(Module, Consumer)} visits, in that order. */
    public static Stream<Op> ops(Module module) {
        return module.functions().stream().flatMap(f -> ops(f.body()));
    }

    /** The ops {@link #forEachOp(Block, Consumer)} visits, in that order. */
    public static Stream<Op> ops(Block block) {
        return block.ops().stream().flatMap(IrWalk::ops);
    }

    /** The ops {@link #forEachOp(Op, Consumer)} visits, in that order. */
    public static Stream<Op> ops(Op op) {
        return Stream.concat(Stream.of(op), op.regions().stream().flatMap(IrWalk::ops));
    }
}
