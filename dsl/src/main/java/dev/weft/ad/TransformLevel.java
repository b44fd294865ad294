package dev.weft.ad;

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
    @Override
    public void readComm(CommHandle comm) {
        Interpreters.under(this, () -> {
            Interpreters.current().readComm(comm);
            return null;
        });
    }
}
