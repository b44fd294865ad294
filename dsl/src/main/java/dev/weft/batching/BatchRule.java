package dev.weft.batching;

import dev.weft.Tensor;
import dev.weft.spi.Params;
import java.util.List;

/**
 * A primitive's batching rule (JAX's {@code primitive_batchers}): the primitive applied to operands that carry a
 * batch axis, computed at the level below the {@link BatchInterpreter} with {@link Tensor} operations, which those
 * levels run, record or transform in turn.
 *
 * @param <P> the primitive's parameter type
 */
@FunctionalInterface
interface BatchRule<P extends Params> {
    /**
     * The outputs, each with its batch axis or {@link BatchInterpreter#UNBATCHED}.
     *
     * @param outputs values of the level below
     * @param dims    one per output
     */
    record Result(List<Tensor> outputs, List<Integer> dims) {
        public Result {
            outputs = List.copyOf(outputs);
            dims = List.copyOf(dims);
        }

        /** One output batched along {@code dim}. */
        static Result of(Tensor output, int dim) {
            return new Result(List.of(output), List.of(dim));
        }
    }

    Result batch(P params, Application app);
}
