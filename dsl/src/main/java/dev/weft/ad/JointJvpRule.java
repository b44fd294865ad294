package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.spi.Params;
import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * A forward-mode rule that computes a primitive's outputs together with their tangents, for control flow: a loop
 * carries its tangents beside its values, a branch returns both. It runs at the level below the transform, like a
 * {@link JvpRule}, and binds the primitive there with regions of its own.
 *
 * @param <P> the primitive's parameter type
 */
@FunctionalInterface
interface JointJvpRule<P extends Params> {
    /** Outputs and their tangents ({@code null} for zero). */
    record Result(List<Tensor> outputs, List<Tensor> tangents) {
    }

    /**
     * @param primals  the inputs
     * @param tangents their tangents, {@code null} for zero (all may be)
     * @param where    the user's line of the construct
     */
    Result jvp(P params, List<Tensor> primals, List<Tensor> tangents, SourceLocation where);
}
