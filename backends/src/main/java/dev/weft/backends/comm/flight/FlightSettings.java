package dev.weft.backends.comm.flight;

import dev.weft.WeftException;
import dev.weft.spi.Settings;
import dev.weft.spi.SourceLocation;

import java.nio.file.Path;

/**
 * The flight recorder's settings, each a system property or else an environment variable.
 *
 * @param timeoutSeconds {@code weft.comm.timeout} / {@code WEFT_COMM_TIMEOUT}: a rank blocked in one communication
 *                       longer than this many seconds dumps its recorder and the job fails (default 600; 0 never)
 * @param capacity       {@code weft.flight.size} / {@code WEFT_FLIGHT_SIZE}: operations kept per rank (default 256,
 *                       rounded up to a power of two)
 * @param dir            {@code weft.flight.dir} / {@code WEFT_FLIGHT_DIR}: where each dump also writes
 *                       {@code flight-rank<N>.jsonl}; null for nowhere
 */
public record FlightSettings(long timeoutSeconds, int capacity, Path dir) {
    public static final String TIMEOUT_ENV = "WEFT_COMM_TIMEOUT";
    public static final long DEFAULT_TIMEOUT_SECONDS = 600;
    private static final int MAX_CAPACITY = 1 << 20;

    /** The settings of this process's system properties and environment. */
    public static FlightSettings fromEnvironment() {
        long timeout = Settings.wholeNumber("weft.comm.timeout", TIMEOUT_ENV, 0, DEFAULT_TIMEOUT_SECONDS);
        long capacity = Settings.wholeNumber("weft.flight.size", "WEFT_FLIGHT_SIZE", 1, 256);
        if (capacity > MAX_CAPACITY) {
            throw new WeftException(SourceLocation.UNKNOWN, "WEFT_FLIGHT_SIZE must be at most " + MAX_CAPACITY
                    + ", got " + capacity);
        }
        String dir = System.getProperty("weft.flight.dir", System.getenv("WEFT_FLIGHT_DIR"));
        return new FlightSettings(timeout, (int) capacity, dir == null || dir.isBlank() ? null : Path.of(dir));
    }
}
