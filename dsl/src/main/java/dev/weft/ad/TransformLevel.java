package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Interpreters;

/**
 * An interpreter of a transform, stacked on the levels below it: it records or transforms (so errors name the
 * user's line), and it passes a program's reads of a communicator's rank or size down, so that a trace below
 * still knows the program is specialised to its rank. Every transform's level extends it (autodiff's here, batching's
 * in {@code dev.weft.batching}).
 */
public abstract class TransformLevel implements Interpreter {
    /**
     * {@code t}, an invariant value of this level (a cotangent of an invariant result), as a value varying over
     * {@code comm}: the same numbers, whose transpose, if this level transposes, is an allreduce SUM over it. A
     * level that only maps values passes it to the level below ({@code Pvary.explicit} there).
     */
    protected abstract Tensor pvary(Tensor t, CommHandle comm);

    /** {@link #pvary} of {@code t}, a value of the level below, applied there. */
    protected final Tensor pvaryBelow(Tensor t, CommHandle comm) {
        return Interpreters.under(this, () -> Pvary.explicit(t, comm));
    }

    @Override
    public void readComm(CommHandle comm) {
        Interpreters.under(this, () -> {
            Interpreters.current().readComm(comm);
            return null;
        });
    }
}
