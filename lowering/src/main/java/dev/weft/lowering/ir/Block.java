package dev.weft.lowering.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * A single-block region: arguments and a list of ops ending in a terminator ({@code func.return} or
 * {@code stablehlo.return}) whose operands are the block's results.
 */
public final class Block {
    private final List<Value> arguments;
    private final List<Op> ops;

    public Block(List<Value> arguments, List<Op> ops) {
        this.arguments = new ArrayList<>(arguments);
        this.ops = new ArrayList<>(ops);
    }

    /** A block with fresh arguments of {@code types} and no ops yet. */
    public static Block withArgs(List<? extends Type> types) {
        return new Block(types.stream().map(Value::new).toList(), List.of());
    }

    public List<Value> arguments() {
        return arguments;
    }

    /** The ops, terminator last; passes may edit the list in place. */
    public List<Op> ops() {
        return ops;
    }

    public Op terminator() {
        return ops.getLast();
    }

    /** The terminator's operands. */
    public List<Value> results() {
        return terminator().operands();
    }
}
