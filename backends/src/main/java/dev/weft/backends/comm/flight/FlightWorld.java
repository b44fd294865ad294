package dev.weft.backends.comm.flight;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;

/**
 * The flight recorders of one world in this process (its one rank under MPI, every rank of a fake world), watched
 * for {@code WEFT_COMM_TIMEOUT} by the {@link FlightWatchdog} from {@link #start} to {@link #close}.
 */
public final class FlightWorld implements AutoCloseable {
    /** What ends a rank whose operation timed out, after its recorder was dumped. */
    @FunctionalInterface
    public interface Timeout {
        /**
         * Ends world rank {@code rank}, or the job.
         *
         * @param blocked the operation that timed out
         * @param message like {@code barrier on 'world' has been blocked for 3.01 s, past WEFT_COMM_TIMEOUT=3 s}
         */
        void expire(int rank, FlightCall blocked, String message);
    }


    private final List<FlightRecorder> recorders;
    private final FlightSettings settings;
    private final Timeout timeout;
    private final String ending;
    private volatile boolean timedOut;

    private FlightWorld(List<FlightRecorder> recorders, FlightSettings settings, Timeout timeout, String ending) {
        this.recorders = List.copyOf(recorders);
        this.settings = settings;
        this.timeout = timeout;
        this.ending = ending;
    }

    /**
     * Starts watching {@code recorders}.
     *
     * @param ending what {@code timeout} does, for the dump's headline: {@code ending the job}
     */
    public static FlightWorld start(List<FlightRecorder> recorders, FlightSettings settings, Timeout timeout,
                                    String ending) {
        FlightWorld w = new FlightWorld(recorders, settings, timeout, ending);
        FlightWatchdog.watch(w);
        return w;
    }

    /** A new recorder for world rank {@code rank} of {@code size} under {@code settings}. */
    public static FlightRecorder recorder(int rank, int size, FlightSettings settings, boolean concurrent) {
        return new FlightRecorder(rank, size, settings.capacity(), concurrent);
    }

    /** Stops watching. */
    @Override
    public void close() {
        FlightWatchdog.unwatch(this);
    }

    /**
     * Prints the recorder of every rank of this world to {@code err} (one write per rank) and, with
     * {@code WEFT_FLIGHT_DIR} set, writes their files.
     *
     * @param reason why, for the files: {@code signal}, {@code abort}, {@code exit}
     * @return whether every file asked for was written (see {@link #writeFiles})
     */
    public boolean dump(String reason, PrintStream err) {
        for (FlightRecorder r : recorders) {
            print(FlightDump.of(r, reason), null, err);
        }
        return writeFiles(reason, err);
    }

    /**
     * Called by the watchdog, one scan of each rank's oldest blocked operation: fires the timeout of the first rank
     * blocked longer than the limit, once.
     */
    void check(long now) {
        long limit = settings.timeoutSeconds() * 1000;
        for (FlightRecorder r : recorders) {
            long start = r.oldestStarted();
            if (start < 0) {
                continue;
            }
            if (limit != 0 && !timedOut && now - start >= limit) {
                timedOut = true;
                expire(r);
                return;
            }
        }
    }

    private void expire(FlightRecorder r) {
        FlightDump d = FlightDump.of(r, "timeout");
        FlightEntry blocked = d.blocked().orElse(null);
        if (blocked == null) {
            timedOut = false;
            return;
        }
        FlightCall c = blocked.call();
        String message = String.format("%s on '%s' has been blocked for %s s, past %s=%d s", c.args(), c.comm(),
                d.secondsSince(blocked.startMillis()), FlightSettings.TIMEOUT_ENV, settings.timeoutSeconds());
        print(d, String.format("%s on '%s' at %s has been blocked for %s s, past %s=%d s; %s", c.args(), c.comm(),
                c.where(), d.secondsSince(blocked.startMillis()), FlightSettings.TIMEOUT_ENV,
                settings.timeoutSeconds(), ending), System.err);
        write(recorders.stream().map(x -> x == r ? d : FlightDump.of(x, "timeout")).toList(), System.err);
        timeout.expire(r.rank(), c, message);
    }

    /** Prints {@code d} under {@code headline} (or none) in one write: under mpirun, pieces interleave. */
    private static void print(FlightDump d, String headline, PrintStream err) {
        System.out.flush();
        String head = headline == null ? "" : String.format("weft: rank %d of %d: %s%n", d.rank(), d.size(),
                headline);
        err.print(String.format("%sweft: flight recorder of rank %d of %d (its last %d communication operations, "
                + "oldest first):%n%s", head, d.rank(), d.size(), d.entries().size(), d.table()));
        err.flush();
    }

    /**
     * With {@code WEFT_FLIGHT_DIR} set, writes the file of every rank of this world, saying on {@code err} why
     * when one cannot be written.
     *
     * @param reason why, for the files: {@code end} at a rank's normal end
     * @return whether every file was written: true when none is asked for; the caller makes the exit fail if not
     */
    public boolean writeFiles(String reason, PrintStream err) {
        return write(recorders.stream().map(r -> FlightDump.of(r, reason)).toList(), err);
    }

    private boolean write(List<FlightDump> dumps, PrintStream err) {
        if (settings.dir() == null) {
            return true;
        }
        boolean written = true;
        for (FlightDump d : dumps) {
            try {
                FlightFile.write(settings.dir(), d);
            } catch (IOException e) {
                written = false;
                err.print(String.format("weft: rank %d: its flight recorder was not written: %s%n", d.rank(),
                        e.getMessage()));
            }
        }
        return written;
    }
}
