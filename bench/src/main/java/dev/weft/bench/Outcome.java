package dev.weft.bench;

/** What running one benchmark program gave: its measurement, or why there is none. */
public sealed interface Outcome permits Measurement, Outcome.Missing {
    /** No measurement: the program was skipped (a tool is missing) or failed; {@code reason} says which. */
    record Missing(String reason) implements Outcome {
    }
}
