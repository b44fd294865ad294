package dev.weft.backends.comm.flight;

import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import java.nio.file.Path;

/**
 * The flight recorder's settings, each a system property or else an environment variable.
 *
 * @param timeoutSeconds {@link Setting#COMM_TIMEOUT}: a rank blocked in one communication longer than this many
 *                       seconds dumps its recorder and the job fails (default 600; 0 never)
 * @param capacity       {@link Setting#FLIGHT_SIZE}: operations kept per rank (default 256, rounded up to a power
 *                       of two)
 * @param dir            {@link Setting#FLIGHT_DIR}: where each dump also writes {@code flight-rank<N>.jsonl}; null
 *                       for nowhere
 */
public record FlightSettings(long timeoutSeconds, int capacity, OutputDirectory dir) {
    public static final String TIMEOUT_ENV = "WEFT_COMM_TIMEOUT";

    /**
     * The settings of this process's system properties and environment.
     *
     * @throws dev.weft.WeftException if one is set to a bad value
     */
    public static FlightSettings fromEnvironment() {
        String dir = Setting.FLIGHT_DIR.text();
        return new FlightSettings(Setting.COMM_TIMEOUT.number(), (int) Setting.FLIGHT_SIZE.number(),
                dir == null ? null : new OutputDirectory(Path.of(dir), Setting.FLIGHT_DIR.setBy()));
    }
}
