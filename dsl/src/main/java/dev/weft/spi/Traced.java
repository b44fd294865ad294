package dev.weft.spi;

/** The payload of a traced tensor: a value recorded by an interpreter that is tracing. */
public interface Traced {
    Aval aval();

    /** The interpreter that recorded it; using the value outside that trace is an error. */
    Interpreter owner();

    /**
     * The interpreter that runs an operation on this value outside any trace, or {@code null} when there is none
     * (the use is then an error): a sharded tensor's operations are partitioned over its mesh.
     */
    default Interpreter eager() {
        return null;
    }

    /** Names the value in errors: "a traced tensor f32[3]". */
    default String describe() {
        return "a traced tensor " + aval();
    }

    /** Ends the error for a use after its trace ended: "a traced tensor f32[3] is used ...". */
    default String usedAfterEnd() {
        return "after its trace ended; return it from the @Compile method instead of keeping it";
    }

    /** Ends the error for reading its elements: "item() reads a traced tensor f32[3]...". */
    default String readHint() {
        return " inside a @Compile method, where values are not known until run time; use Weft.cond or"
                + " Tensor.where for data-dependent choices, or return the tensor and read it after the call";
    }
}
