package dev.weft.backends.cpu;

import dev.weft.spi.EagerInterpreterProvider;
import dev.weft.spi.Interpreter;
import java.util.ServiceLoader;

/**
 * Makes {@link CpuEagerInterpreter} the interpreter of operations outside any trace, with the rules of every
 * {@link EagerRuleProvider} on the class path added.
 */
public final class CpuEagerInterpreterProvider implements EagerInterpreterProvider {
    @Override
    public Interpreter eagerInterpreter() {
        CpuEagerInterpreter interp = new CpuEagerInterpreter();
        ServiceLoader.load(EagerRuleProvider.class).forEach(p -> p.register(interp));
        return interp;
    }
}
