package dev.weft.spi;

/** The payload of a traced tensor: a value recorded by an interpreter that is tracing. */
public interface Traced {
    Aval aval();

    /** The interpreter that recorded it; using the value outside that trace is an error. */
    Interpreter owner();
}
