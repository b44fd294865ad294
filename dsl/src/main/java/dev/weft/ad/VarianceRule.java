package dev.weft.ad;

import dev.weft.spi.Params;
import java.util.Collections;
import java.util.List;

/**
 * How a primitive types its operands and results across ranks (JAX's varying-manual-axes rule): the variance every
 * operand must have, and each result's. An operand's tangent that is invariant where the operand must vary is made
 * varying first (JAX's {@code pvary}, transposed to an {@code allreduce(SUM)}). A primitive without a rule computes
 * the same function on every rank: operands and results are invariant where all operands are.
 */
@FunctionalInterface
interface VarianceRule<P extends Params> {
    /** The typing of an application with {@code outputs} results to operands of variance {@code operands}. */
    Typing typing(P params, List<Variance> operands, int outputs);

    /** What the operands must be, and what the results are. */
    record Typing(Variance operands, List<Variance> results) {
        /** Operands and {@code outputs} results all of variance {@code v}. */
        static Typing uniform(Variance v, int outputs) {
            return new Typing(v, Collections.nCopies(outputs, v));
        }
    }

    /** The meet of {@code vs}: invariant over a communicator where every one is. */
    static Variance meet(List<Variance> vs) {
        Variance v = Variance.INVARIANT;
        for (Variance o : vs) {
            v = v.meet(o);
        }
        return v;
    }
}
