package dev.weft.bench;

/** The benchmarks cannot run at all: a required tool is missing or a reference does not compile. */
public final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BenchException(String message) {
        super(message);
    }
}
