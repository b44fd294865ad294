package dev.weft.prim.reference;

import dev.weft.spi.EagerInterpreterProvider;
import dev.weft.spi.Interpreter;

/**
 * Makes {@link ReferenceInterpreter} the eager interpreter of dsl's tests. Listed only on dsl's test class path
 * ({@code dsl/src/test/eager}), not in its test jar, so that the backends' tests, which use the test jar, keep their
 * own eager interpreter.
 */
public final class ReferenceInterpreterProvider implements EagerInterpreterProvider {
    @Override
    public Interpreter eagerInterpreter() {
        return new ReferenceInterpreter();
    }
}
