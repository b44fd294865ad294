package dev.weft.backends.timeline;

import dev.weft.backends.comm.Communicator;
import dev.weft.spi.CommBinding;
import dev.weft.spi.Settings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The timeline this process records when {@code WEFT_TIMELINE=<dir>} (or system property {@code weft.timeline}) is
 * set: compiled calls, kernels and communication of each rank, written at exit as {@code <dir>/timeline-rank<N>.json}
 * (Chrome trace-event JSON, see {@link TraceFile}), one file per rank, fake ranks included.
 *
 * <p>The setting is read once, at start-up: when it is unset, {@link #ENABLED} is a constant false, the executor
 * builds no timed wrappers and the eager hooks fold away. Each rank keeps at most {@code WEFT_TIMELINE_EVENTS}
 * (system property {@code weft.timeline.events}, default 1,000,000) events, about 40 bytes each; later ones are
 * counted as dropped, which the file's {@code otherData} says. Events belong to the rank of the recording thread's
 * {@code Comm.world()}; a JVM that runs several fake worlds one after another writes them into the same files.
 * Files are written by a shutdown hook, so a rank that halts (a signal, {@code MPI_Abort}) may write none.
 */
public final class Timeline {
    public static final String PROPERTY = "weft.timeline";
    public static final String ENV = "WEFT_TIMELINE";
    private static final String DIR = Settings.text(PROPERTY, ENV);
    /** Whether this process records a timeline; fixed at start-up. */
    public static final boolean ENABLED = DIR != null;
    static final int CAP = (int) Math.min(Integer.MAX_VALUE - 8,
            Settings.wholeNumber("weft.timeline.events", "WEFT_TIMELINE_EVENTS", 1, 1_000_000));
    /** {@link System#nanoTime} at start-up, and the wall-clock time then in nanoseconds since the epoch. */
    private static final long T0 = System.nanoTime();
    private static final long EPOCH_NANOS = epochNanos();
    private static final Map<Integer, RankEvents> RANKS = new ConcurrentHashMap<>();

    static {
        if (ENABLED) {
            Runtime.getRuntime().addShutdownHook(new Thread(Timeline::writeAll, "weft-timeline"));
        }
    }

    private Timeline() {
    }

    /** Records an event at {@code site} that began at {@link System#nanoTime} {@code start} and ends now. */
    public static void record(EventSite site, long start) {
        long end = System.nanoTime();
        int rank = ((Communicator) CommBinding.world()).rank();
        RANKS.computeIfAbsent(rank, RankEvents::new).add(site, start, end, Thread.currentThread());
    }

    /** The ranks that have recorded events so far. */
    static Set<Integer> ranksRecorded() {
        return Set.copyOf(RANKS.keySet());
    }

    /** Nanoseconds since the epoch at {@link System#nanoTime} {@code t}. */
    static long epochNanos(long t) {
        return EPOCH_NANOS + (t - T0);
    }

    /** The directory files go to. */
    static Path directory() {
        return Path.of(DIR);
    }

    /** Writes each rank's file; a failure is reported on stderr, since the JVM is exiting. */
    private static void writeAll() {
        try {
            Files.createDirectories(directory());
            for (RankEvents r : RANKS.values()) {
                TraceFile.write(directory().resolve(TraceFile.rankFileName(r.rank())), r);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.print("weft: could not write the timeline to " + DIR + ": " + e.getMessage()
                    + System.lineSeparator());
        }
    }

    private static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
