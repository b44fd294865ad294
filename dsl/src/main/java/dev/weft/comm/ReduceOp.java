package dev.weft.comm;

import dev.weft.Tensor;
import java.util.Objects;
import java.util.function.BinaryOperator;

/**
 * How {@link Comm#allreduce}, {@link Comm#reduce} and {@link Comm#reduceScatter} combine contributions.
 * Built-ins map to MPI_SUM/PROD/MIN/MAX and NCCL's ops; {@link #custom} takes a Java function on tensors that
 * Weft traces into a sub-computation and runs elementwise (it must be associative and commutative, as MPI
 * assumes).
 */
public final class ReduceOp {
    public static final ReduceOp SUM = new ReduceOp("sum", null);
    public static final ReduceOp PROD = new ReduceOp("prod", null);
    public static final ReduceOp MIN = new ReduceOp("min", null);
    public static final ReduceOp MAX = new ReduceOp("max", null);

    private final String name;
    private final BinaryOperator<Tensor> fn;

    private ReduceOp(String name, BinaryOperator<Tensor> fn) {
        this.name = name;
        this.fn = fn;
    }

    /** A user reduction {@code fn(a, b)} over tensors of the reduced dtype (applied elementwise). */
    public static ReduceOp custom(String name, BinaryOperator<Tensor> fn) {
        if (name.isEmpty() || !name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new IllegalArgumentException("custom reduce op name must be an identifier: '" + name + "'");
        }
        return new ReduceOp(name, Objects.requireNonNull(fn));
    }

    public String name() {
        return name;
    }

    public boolean isCustom() {
        return fn != null;
    }

    /** The user's function, or {@code null} for a built-in. */
    public BinaryOperator<Tensor> function() {
        return fn;
    }

    @Override
    public String toString() {
        return name;
    }
}
