package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;
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

    /** The custom op this thread is applying, if any: MPI forbids communicating from inside a user operation. */
    private static final ThreadLocal<ReduceOp> APPLYING = new ThreadLocal<>();

    private final String name;
    private final BinaryOperator<Tensor> fn;

    private ReduceOp(String name, BinaryOperator<Tensor> fn) {
        this.name = name;
        this.fn = fn;
    }

    /**
     * A user reduction {@code fn(a, b)} over tensors of the reduced dtype (applied elementwise): given two 1-D
     * tensors of one dtype and length it must return one of the same dtype and length; a collective using an op
     * that returns anything else fails with a {@link WeftException} naming the op, what it returned and the line.
     *
     * @throws WeftException naming the line when {@code name} is not an identifier or {@code fn} is null
     */
    public static ReduceOp custom(String name, BinaryOperator<Tensor> fn) {
        if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new WeftException(SourceLocation.capture(), "ReduceOp.custom: the name "
                    + (name == null ? "null" : "'" + name + "'") + " is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
        }
        if (fn == null) {
            throw new WeftException(SourceLocation.capture(), "ReduceOp.custom: the function of '" + name + "' is null");
        }
        return new ReduceOp(name, fn);
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

    /**
     * This custom op's function applied to {@code a} and {@code b}: how runtimes call it, so that a communication
     * call inside it is refused ({@link #refuseInside}).
     */
    public Tensor apply(Tensor a, Tensor b) {
        ReduceOp outer = APPLYING.get();
        APPLYING.set(this);
        try {
            return fn.apply(a, b);
        } finally {
            APPLYING.set(outer);
        }
    }

    /**
     * Throws, naming the caller's line, when this thread is applying a custom op: {@code call} (a communication
     * call) would communicate from inside it, which MPI forbids (it deadlocks or corrupts the enclosing collective).
     */
    public static void refuseInside(String call) {
        ReduceOp op = APPLYING.get();
        if (op != null) {
            throw new WeftException(SourceLocation.capture(), call + " inside custom reduce op '" + op.name + "': a reduce op must"
                    + " not communicate (MPI forbids communication inside a user operation); compute it from its two"
                    + " arguments only");
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
