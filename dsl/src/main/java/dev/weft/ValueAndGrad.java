package dev.weft;

/**
 * The result of {@link Weft#valueAndGrad}: a function's value (one f32 or f64 element) and its gradient at one
 * point (of the argument's dtype and shape), from one evaluation of the function.
 */
public record ValueAndGrad(Tensor value, Tensor grad) {
    /** The value and gradient of a function of a tree: the gradient is a tree of the argument's structure. */
    public record Of<T>(Tensor value, T grad) {
    }
}
