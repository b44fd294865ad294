package dev.weft.lowering.ir;

import java.util.List;
import java.util.Set;

/**
 * Whether a {@code stablehlo.reduce} body is a library reduction: {@code ^bb0(a, b): return op(a, b)} (or
 * {@code op(b, a)}) for {@code op} one of add, multiply, maximum and minimum. Fusion and every executor ask here.
 */
public final class LibraryReduction {
    private static final Set<String> COMBINERS = Set.of(StableHlo.ADD, StableHlo.MULTIPLY, StableHlo.MAXIMUM,
            StableHlo.MINIMUM);

    private LibraryReduction() {
    }

    /** The combining op's name ({@link StableHlo#ADD}, ...) when {@code body} is a library reduction, else null. */
    public static String combiner(Block body) {
        List<Op> ops = body.ops();
        List<Value> args = body.arguments();
        if (ops.size() != 2 || args.size() != 2) {
            return null;
        }
        Op c = ops.getFirst();
        boolean onArguments = c.operands().size() == 2
                && (c.operand(0) == args.get(0) && c.operand(1) == args.get(1)
                    || c.operand(0) == args.get(1) && c.operand(1) == args.get(0));
        boolean returnsIt = body.results().size() == 1 && body.results().getFirst() == c.result();
        return COMBINERS.contains(c.name()) && onArguments && returnsIt ? c.name() : null;
    }
}
