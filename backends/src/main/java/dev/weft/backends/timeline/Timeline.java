package dev.weft.backends.timeline;

import dev.weft.spi.CommBinding;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import java.io.IOException;
import java.nio.file.InvalidPathException;
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
 * Files are written by a shutdown hook, and by every exit that ends the process without its hooks ({@link #write}:
 * a communication timeout, a signal or an abort under MPI, the fake ranks' exit guard); a file that cannot be
 * written is an error on stderr and makes the process exit with status 1.
 */
public final class Timeline {
    public static final String PROPERTY = "weft.timeline";
    public static final String ENV = "WEFT_TIMELINE";
    private static final String DIR = Setting.TIMELINE.text();
    /** Whether this process records a timeline; fixed at start-up. */
    public static final boolean ENABLED = DIR != null;
    /** {@link System#nanoTime} at start-up, and the wall-clock time then in nanoseconds since the epoch. */
    private static final long T0 = System.nanoTime();
    private static final long EPOCH_NANOS = epochNanos();
    private static final Map<Integer, RankEvents> RANKS = new ConcurrentHashMap<>();
    private static final Thread AT_EXIT = new Thread(Timeline::writeAtExit, "weft-timeline");

    static {
        if (ENABLED) {
            Runtime.getRuntime().addShutdownHook(AT_EXIT);
        }
    }

    private Timeline() {
    }

    /** Records an event at {@code site} that began at {@link System#nanoTime} {@code start} and ends now. */
    public static void record(EventSite site, long start) {
        long end = System.nanoTime();
        int rank = CommBinding.world().rank();
        RANKS.computeIfAbsent(rank, RankEvents::new).add(site, start, end, Thread.currentThread());
    }

    /**
     * Writes each rank's file now, with the events recorded so far, unless no timeline is recorded; for an exit
     * that ends the process without its shutdown hooks. Says on stderr why when a file cannot be written.
     *
     * @return whether every file was written
     */
    public static synchronized boolean write() {
        if (!ENABLED) {
            return true;
        }
        try {
            OutputDirectory dir = new OutputDirectory(Path.of(DIR), Setting.TIMELINE.setBy());
            for (RankEvents r : RANKS.values()) {
                RankEvents.Snapshot s = r.snapshot();
                dir.write(TraceFile.rankFileName(s.rank()), out -> TraceFile.write(s, out));
            }
            return true;
        } catch (IOException | InvalidPathException e) {
            System.out.flush();
            System.err.print("weft: the timeline was not written: " + e.getMessage() + System.lineSeparator());
            System.err.flush();
            return false;
        }
    }

    /**
     * Leaves writing the files at exit to the caller, which orders it with the rest of its exit (MPI's, before
     * {@code MPI_Finalize}) and sets the exit status when {@link #write} fails.
     */
    public static void writtenByCaller() {
        if (ENABLED) {
            try {
                Runtime.getRuntime().removeShutdownHook(AT_EXIT);
            } catch (IllegalStateException exiting) {
                // the hook runs anyway, and writes the same files
            }
        }
    }

    /** The ranks that have recorded events so far. */
    static Set<Integer> ranksRecorded() {
        return Set.copyOf(RANKS.keySet());
    }

    /** Nanoseconds since the epoch at {@link System#nanoTime} {@code t}. */
    static long epochNanos(long t) {
        return EPOCH_NANOS + (t - T0);
    }

    /** The shutdown hook: a file that cannot be written fails the process, whatever its status was going to be. */
    private static void writeAtExit() {
        if (!write()) {
            Runtime.getRuntime().halt(1);
        }
    }

    private static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
