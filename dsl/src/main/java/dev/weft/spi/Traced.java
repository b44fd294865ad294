package dev.weft.spi;

/** The payload of a traced tensor: a value recorded by an interpreter that is tracing. */
public interface Traced {
    Aval aval();

    /** The interpreter that recorded it; using the value outside that trace is an error. */
    Interpreter owner();

    /** Ends the error for a use after its trace ended: "a traced tensor f32[3] is used ...". */
    default String usedAfterEnd() {
        return "after its trace ended; return it from the @Compile method instead of keeping it";
    }
}
