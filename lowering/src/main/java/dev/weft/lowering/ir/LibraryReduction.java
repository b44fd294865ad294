package dev.weft.lowering.ir;

import dev.weft.prim.ElementwiseOp;
import java.util.List;

/**
 * Whether a {@code stablehlo.reduce} body is a library reduction: {@code ^bb0(a, b): return op(a, b)} (or
 * {@code op(b, a)}) for {@code op} an {@link ElementwiseOp#isReducible} op. Fusion and every executor ask here.
 */
public final class LibraryReduction {
    private LibraryReduction() {
    }

    /** The combining op when {@code body} is a library reduction, else null. */
    public static ElementwiseOp combiner(Block body) {
        List<Op> ops = body.ops();
        List<Value> args = body.arguments();
        if (ops.size() != 2 || args.size() != 2) {
            return null;
        }
        Op c = ops.getFirst();
        ElementwiseOp op = c.elementwise();
        boolean onArguments = c.operands().size() == 2
                && (c.operand(0) == args.get(0) && c.operand(1) == args.get(1)
                    || c.operand(0) == args.get(1) && c.operand(1) == args.get(0));
        boolean returnsIt = body.results().size() == 1 && body.results().getFirst() == c.result();
        return op != null && op.isReducible() && onArguments && returnsIt ? op : null;
    }
}
