package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.spi.Params;
import java.util.List;

/**
 * A primitive's forward-mode rule: the tangents of its outputs given those of its inputs, at the primal point.
 * It computes with {@link Tensor} operations, which the interpreters below the transform run or record (so the
 * rule itself is differentiated by an outer transform, and recorded by reverse mode). The result must be linear
 * in the tangents.
 *
 * @param <P> the primitive's parameter type
 */
@FunctionalInterface
public interface JvpRule<P extends Params> {
    /**
     * @param primals  the inputs
     * @param tangents their tangents, {@code null} for a zero tangent (at least one is not)
     * @param outputs  the primitive's outputs at {@code primals}, computed already
     * @return the tangent of each output, {@code null} for zero
     */
    List<Tensor> jvp(P params, List<Tensor> primals, List<Tensor> tangents, List<Tensor> outputs);
}
