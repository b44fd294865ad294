package dev.weft.spi;

/** Supplies the interpreter used outside any trace; found with {@link java.util.ServiceLoader}. */
public interface EagerInterpreterProvider {
    Interpreter eagerInterpreter();
}
