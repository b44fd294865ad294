package dev.weft.optim;

import dev.weft.Tensor;

/**
 * A learning rate as a function of the step count (an f64 scalar tensor, 1 at the first update): traced like any
 * other code, so a decaying rate inside {@code @Compile} is one program for every step (optax's schedules).
 */
@FunctionalInterface
public interface Schedule {
    /** The rate at {@code step}, a scalar tensor. */
    Tensor at(Tensor step);

    /** The constant rate {@code lr}. */
    static Schedule constant(double lr) {
        return step -> Tensor.scalar(step.dtype(), lr);
    }

    /** {@code lr · decay^(step - 1)}, as PyTorch's {@code ExponentialLR} stepped after every update. */
    static Schedule exponential(double lr, double decay) {
        return step -> Tensor.scalar(step.dtype(), decay).pow(step.sub(1)).mul(lr);
    }
}
