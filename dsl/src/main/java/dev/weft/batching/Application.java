package dev.weft.batching;

import dev.weft.Tensor;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * One application of a primitive that a {@link BatchRule} batches.
 *
 * @param args     the operands, values of the level below the batch level (a batched one has the batch axis)
 * @param dims     each operand's batch axis, {@link BatchInterpreter#UNBATCHED} for none
 * @param outAvals the outputs' avals for one batch element (what the primitive gives unbatched)
 * @param where    the user's line of the operation ({@link SourceLocation#UNKNOWN} when not known)
 * @param level    the batch level it belongs to (its batch size, its requests)
 */
record Application(List<Tensor> args, List<Integer> dims, List<Aval> outAvals, SourceLocation where,
                   BatchInterpreter level) {
    Application {
        args = List.copyOf(args);
        dims = List.copyOf(dims);
        outAvals = List.copyOf(outAvals);
    }

    Tensor arg(int i) {
        return args.get(i);
    }

    int dim(int i) {
        return dims.get(i);
    }

    boolean batched(int i) {
        return dims.get(i) != BatchInterpreter.UNBATCHED;
    }

    /** Whether any operand from {@code from} on is batched. */
    boolean anyBatchedFrom(int from) {
        for (int i = from; i < dims.size(); i++) {
            if (batched(i)) {
                return true;
            }
        }
        return false;
    }

    long size() {
        return level.size();
    }

    /** Operand {@code i} with its batch axis at {@code to}, broadcast along a new one there if it has none. */
    Tensor at(int i, int to) {
        return BatchAxes.materialize(arg(i), dim(i), size(), to);
    }

    /** Operand {@code i} with its batch axis first ({@link #at}). */
    Tensor front(int i) {
        return at(i, 0);
    }
}
