package dev.weft.spi;

import dev.weft.Tensor;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Gives meaning to primitive applications: the eager interpreter computes them, a tracing interpreter records
 * them. The innermost interpreter of the calling thread ({@link Interpreters#current()}) receives every
 * operation.
 */
public interface Interpreter {
    /**
     * Applies {@code prim}. Shapes were already checked: {@code outAvals} is the result of its shape rule.
     * {@code where} is the user's source location, or {@code null} when the caller did not capture it.
     */
    List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals, SourceLocation where);

    /** Runs {@code body(i, carry)} for {@code i} in {@code [lo, hi)}; {@code i} is an I32 scalar. */
    List<Tensor> fori(int lo, int hi, List<Tensor> init, BiFunction<Tensor, List<Tensor>, List<Tensor>> body,
                      SourceLocation where);

    /** One of two branches, chosen by the BOOL scalar {@code pred}; both must give the same avals. */
    List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                      SourceLocation where);

    /** True for interpreters that record rather than compute. */
    boolean isTracing();

    /**
     * Notes that the program read {@code comm}'s rank or size (a tracing interpreter records it: such a program is
     * specialised to its rank, so its ranks take part in the schedule check even where it sends nothing).
     */
    default void readComm(CommHandle comm) {
    }
}
