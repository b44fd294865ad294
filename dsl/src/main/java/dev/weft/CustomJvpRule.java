package dev.weft;

import java.util.List;

/**
 * The forward-mode rule of a {@link Weft#customJvp} function (JAX's {@code defjvp}): its outputs at
 * {@code primals} and their tangents along {@code tangents}. The tangent computation must be linear in the
 * tangents: reverse mode transposes it ({@link Weft#grad}, {@link Weft#vjp}), and an outer transform differentiates
 * the rule's own code (grad of grad).
 */
@FunctionalInterface
public interface CustomJvpRule {
    /**
     * @param primals  the function's arguments
     * @param tangents one per argument, of its dtype and shape (zeros for an argument that is not differentiated,
     *                 and for an integer one)
     * @return the outputs, of the dtypes and shapes the function returns, and one tangent per output (of the
     *         output's dtype and shape; ignored for an integer output)
     */
    Jvp apply(List<Tensor> primals, List<Tensor> tangents);
}
