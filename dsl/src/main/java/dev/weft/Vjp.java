package dev.weft;

import java.util.List;
import java.util.function.Function;

/**
 * The result of {@link Weft#vjp}: the function's outputs, and its pullback, which maps a cotangent per output
 * (same dtype and shape) to the cotangent of each input (vector-Jacobian product). The pullback may be called any
 * number of times; it runs where it is called (eagerly, or recorded inside {@code @Compile}, or differentiated
 * again by an enclosing transform).
 */
public final class Vjp {
    private final List<Tensor> outputs;
    private final Function<List<Tensor>, List<Tensor>> pullback;

    public Vjp(List<Tensor> outputs, Function<List<Tensor>, List<Tensor>> pullback) {
        this.outputs = List.copyOf(outputs);
        this.pullback = pullback;
    }

    /** The function's outputs at the primal point. */
    public List<Tensor> outputs() {
        return outputs;
    }

    /** The cotangent of each input given {@code cotangents}, one per output; integer inputs get zeros. */
    public List<Tensor> pullback(List<Tensor> cotangents) {
        return pullback.apply(List.copyOf(cotangents));
    }
}
