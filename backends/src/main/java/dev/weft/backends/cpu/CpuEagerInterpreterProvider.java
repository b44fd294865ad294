package dev.weft.backends.cpu;

import dev.weft.spi.EagerInterpreterProvider;
import dev.weft.spi.Interpreter;

/** Makes {@link CpuEagerInterpreter} the interpreter of operations outside any trace. */
public final class CpuEagerInterpreterProvider implements EagerInterpreterProvider {
    @Override
    public Interpreter eagerInterpreter() {
        return new CpuEagerInterpreter();
    }
}
