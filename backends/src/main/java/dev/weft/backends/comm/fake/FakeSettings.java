package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.ThreadLevel;
import dev.weft.spi.Setting;

import java.time.Duration;

/**
 * How strict one fake world is.
 *
 * @param timeout    the watchdog limit: past it every rank still blocked fails with the state report
 * @param eagerLimit sends of at most this many bytes complete locally (the message is buffered), as under an MPI
 *                   implementation's eager protocol; larger ones complete only once a matching receive was
 *                   posted ({@code MPI_Ssend}). 0 buffers nothing, not even empty messages.
 * @param level      which threads of a rank may communicate (see {@link ThreadLevel})
 */
record FakeSettings(Duration timeout, long eagerLimit, ThreadLevel level) {
    /**
     * The settings of the system properties {@code weft.fake.timeout} (seconds, default
     * {@value FakeWorld#DEFAULT_TIMEOUT_SECONDS}) and {@code weft.fake.eagerLimit} (bytes, default 0), and of the
     * environment variable {@value ThreadLevel#ENV} (default {@code single}).
     */
    static FakeSettings fromEnvironment() {
        return new FakeSettings(Duration.ofNanos((long) (Setting.FAKE_TIMEOUT.seconds() * 1e9)),
                Setting.FAKE_EAGER_LIMIT.number(), ThreadLevel.requested());
    }

    FakeSettings withTimeout(Duration t) {
        return new FakeSettings(t, eagerLimit, level);
    }

    /** Whether a send of {@code bytes} completes locally. */
    boolean buffers(long bytes) {
        return eagerLimit > 0 && bytes <= eagerLimit;
    }
}
