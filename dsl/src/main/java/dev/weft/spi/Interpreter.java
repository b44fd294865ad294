package dev.weft.spi;

import dev.weft.Tensor;
import java.util.List;

/**
 * Gives meaning to primitive applications: the eager interpreter computes them, a tracing interpreter records
 * them, a transform transforms them. The innermost interpreter of the calling thread
 * ({@link Interpreters#current()}) receives every operation, control flow included: {@code fori} and {@code cond}
 * are primitives whose params hold closed regions ({@code dev.weft.graph.RegionParams}), which an interpreter runs
 * with {@code dev.weft.graph.GraphEvaluator} or records as they are.
 */
public interface Interpreter {
    /**
     * Applies {@code prim}. Shapes were already checked: {@code outAvals} is the result of its shape rule.
     * {@code where} is the user's source location, or {@code null} when the caller did not capture it.
     */
    List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals, SourceLocation where);

    /**
     * Whether it keeps the location of the operations it receives (a trace records it on each node, for errors at
     * compile and run time). A transform that only passes operations down, raising its own errors while the user's
     * call is still on the stack, says no: {@link Bind#bind} then skips walking the stack, the largest cost of an
     * eager operation under {@code grad}, and the level below captures it if it needs it.
     */
    default boolean keepsLocations() {
        return true;
    }

    /**
     * Notes that the program read {@code comm}'s rank or size (a tracing interpreter records it in the graph's
     * {@code commsRead}: such a program is specialised to its rank).
     */
    default void readComm(CommHandle comm) {
    }

    /**
     * Whether it takes {@code value}, which no active interpreter traced, as an operand: a body that eager code
     * traces captures a sharded tensor ({@link Traced#eager}), which the loop or branch then runs on eagerly.
     */
    default boolean lifts(Traced value) {
        return false;
    }
}
