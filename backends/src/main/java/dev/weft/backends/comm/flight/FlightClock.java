package dev.weft.backends.comm.flight;

/**
 * The time recorded operations start and end at, in milliseconds since the epoch, advanced by the
 * {@link FlightWatchdog} every {@value #TICK_MILLIS} ms. Reading it costs a load, where {@code System.nanoTime}
 * costs ~30 ns on a VM: as much as a whole compiled one-rank allreduce. Times are therefore only as fine as the
 * tick; an operation shorter than it may show no duration.
 */
final class FlightClock {
    /** How often the watchdog advances the clock. */
    static final long TICK_MILLIS = 10;
    private static final long EPOCH_MILLIS = System.currentTimeMillis();
    private static final long EPOCH_NANOS = System.nanoTime();
    /**
     * Volatile, so that each read is done (a compiled loop cannot hoist it); on x86 a volatile read is a plain
     * load. Not a {@code VarHandle}'s opaque read: before the JIT has compiled the recorder, each of those is a few
     * interpreted method handle calls, twice per operation.
     */
    private static volatile long now = EPOCH_MILLIS;

    private FlightClock() {
    }

    /** The time of the last tick. */
    static long now() {
        return now;
    }

    /** Advances the clock to the present: monotonic, anchored at the wall clock's time when this class loaded. */
    static void tick() {
        now = EPOCH_MILLIS + (System.nanoTime() - EPOCH_NANOS) / 1_000_000;
    }
}
