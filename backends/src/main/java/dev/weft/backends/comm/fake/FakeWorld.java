package dev.weft.backends.comm.fake;

import dev.weft.WeftException;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.OutstandingRequests;
import dev.weft.backends.comm.ThreadLevel;
import dev.weft.backends.comm.flight.FlightCommunicator;
import dev.weft.backends.comm.flight.FlightRecorder;
import dev.weft.backends.comm.flight.FlightSettings;
import dev.weft.backends.comm.flight.FlightWorld;
import dev.weft.spi.SharedStatics;
import dev.weft.spi.SourceLocation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * Runs N ranks as threads of this JVM, each with its handle on a fresh world communicator named {@code world},
 * with MPI's matching semantics (see {@link Communicator}), as strict as any legal MPI:
 * <ul>
 *   <li>A blocking send completes only once the destination has posted a matching receive, as
 *       {@code MPI_Ssend} (MPI lets any send wait so); an {@code isend}'s request completes then too. So a
 *       program that relies on sends being buffered deadlocks here as it may under MPI. The system property
 *       {@code weft.fake.eagerLimit=<bytes>} (default 0) models an implementation's eager protocol: sends of at
 *       most that many bytes complete locally, the message buffered.</li>
 *   <li>The thread level of the environment variable {@value ThreadLevel#ENV} applies as under MPI (see
 *       {@link ThreadLevel}); by default only the rank's own thread may communicate. Threads a rank starts run in
 *       its thread group and see its world from {@code Comm.world()}; an exception escaping one fails the rank. A
 *       rank ends when its own thread does, so its other threads must be done communicating by then, as a
 *       process's must be before {@code MPI_Finalize}.</li>
 *   <li>The ranks share the JVM's classes, and so their static fields, unless each runs its own copy of the user's
 *       classes ({@code bin/weft run} and {@code @Ranks} test methods do, see {@link dev.weft.spi.RankClasses});
 *       with the agent, a static field of a shared user class written on two ranks fails the second at its line
 *       ({@link SharedStatics}).</li>
 *   <li>A call to {@code System.exit} while other ranks still run (and do not end or call it too within two
 *       seconds) ends the JVM with status 1 after printing which ranks were running and what they were doing:
 *       one fake rank cannot end the others' processes.</li>
 * </ul>
 *
 * <p>Nothing hangs. When every live rank is blocked and none can proceed, every blocked rank fails with a
 * {@link DeadlockException} reporting what each rank waits for. A rank blocked on a peer that has failed or
 * finished (and so will never send, receive, or join the collective) fails at once with an error naming that
 * peer. A watchdog fails everything with the same state report once the world has run longer than its timeout:
 * by default {@value #DEFAULT_TIMEOUT_SECONDS} s, or the seconds in the system property {@code weft.fake.timeout}.
 *
 * <p>A rank may have at most 65536 requests started and not waited (or {@code -Dweft.requests.max}, see
 * {@link OutstandingRequests}); a rank that ends normally
 * with some never waited says so on stderr, naming the first few.
 *
 * <p>Each rank keeps a flight recorder of its communication ({@link FlightWorld}); a rank blocked in one operation
 * longer than {@code WEFT_COMM_TIMEOUT} prints it to stderr and fails, while the other ranks go on.
 */
public final class FakeWorld {
    /** The watchdog limit when {@code weft.fake.timeout} is not set. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 120;
    private static final long GRACE_MILLIS = 2000;

    /** The code one rank runs. */
    @FunctionalInterface
    public interface RankBody {
        void run(Communicator world) throws Exception;
    }

    private FakeWorld() {
    }

    /**
     * A one-rank world for a process running neither under {@code mpirun} nor on fake ranks: every collective is
     * local, and a receive (or a send beyond the eager limit) with no match fails as a deadlock instead of
     * blocking. Any thread of the process may use it.
     */
    public static Communicator single() {
        FakeSettings settings = FakeSettings.fromEnvironment().withTimeout(Duration.ofDays(365));
        WorldMonitor monitor = new WorldMonitor(1, settings);
        FlightSettings flight = FlightSettings.fromEnvironment();
        FlightRecorder recorder = FlightWorld.recorder(0, 1, flight, settings.level() == ThreadLevel.MULTIPLE);
        FlightWorld.start(List.of(recorder), flight, (rank, blocked, message) -> monitor.timeOut(rank, message),
                "failing the rank");
        FakeCommunicator world = new FakeCommunicator(monitor, new CommGroup("world", new int[] {0}), 0, true);
        return FlightCommunicator.of(world, world.privateDup(SourceLocation.UNKNOWN), recorder);
    }

    /** Runs {@code body} on {@code n} ranks under the default watchdog; see {@link #run(int, Duration, RankBody)}. */
    public static void run(int n, RankBody body) {
        run(n, FakeSettings.fromEnvironment(), body);
    }

    /**
     * Runs {@code body} once per rank, each on its own thread, and returns when every rank has finished.
     *
     * @throws RanksFailedException if any rank threw (or was still running when the watchdog expired and did not
     *                              stop within a grace period); it names each failed rank
     */
    public static void run(int n, Duration timeout, RankBody body) {
        run(n, FakeSettings.fromEnvironment().withTimeout(timeout), body);
    }

    /** Runs {@code body} once per rank under {@code settings}; see {@link #run(int, Duration, RankBody)}. */
    static void run(int n, FakeSettings settings, RankBody body) {
        if (n < 1) {
            throw new IllegalArgumentException("a fake world needs at least one rank, got " + n);
        }
        WorldMonitor monitor = new WorldMonitor(n, settings);
        HeapReserve.hold();
        CommGroup world = new CommGroup("world", IntStream.range(0, n).toArray());
        Thread[] threads = new Thread[n];
        long worldId = SharedStatics.newWorld();
        FlightSettings flightSettings = FlightSettings.fromEnvironment();
        List<FlightRecorder> recorders = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            recorders.add(FlightWorld.recorder(r, n, flightSettings, settings.level() == ThreadLevel.MULTIPLE));
        }
        FlightWorld flight = FlightWorld.start(recorders, flightSettings,
                (rank, blocked, message) -> monitor.timeOut(rank, message), "failing the rank");
        for (int r = 0; r < n; r++) {
            int rank = r;
            FakeCommunicator raw = new FakeCommunicator(monitor, world, rank, true);
            Communicator comm = FlightCommunicator.of(raw, raw.privateDup(SourceLocation.UNKNOWN), recorders.get(r));
            RankThreads group = new RankThreads(monitor, rank);
            threads[r] = Thread.ofPlatform().group(group).name(group.getName()).daemon().unstarted(() -> {
                Throwable failure = null;
                SharedStatics.onRank(worldId, rank);
                monitor.started(rank);
                try {
                    body.run(comm);
                } catch (Throwable t) {
                    HeapReserve.releaseOn(t);
                    failure = t;
                }
                String neverWaited = failure == null ? monitor.requests(rank).neverWaited() : null;
                if (neverWaited != null) {
                    System.err.print(String.format("weft: rank %d of %d: %s%n", rank, n, neverWaited));
                }
                monitor.finish(rank, failure);
            });
        }
        ExitGuard guard = ExitGuard.install(threads, monitor, flight);
        for (Thread t : threads) {
            t.start();
        }
        try {
            joinAll(threads, settings.timeout(), monitor);
        } finally {
            guard.remove();
            flight.close();
        }
        SortedMap<Integer, Throwable> failed = new TreeMap<>();
        for (int r = 0; r < n; r++) {
            if (threads[r].isAlive()) {
                failed.put(r, new CommException(SourceLocation.UNKNOWN,
                        "rank " + r + " did not stop after the watchdog expired\n" + monitor.expire()));
            } else if (monitor.failure(r) != null) {
                failed.put(r, monitor.failure(r));
            }
        }
        if (!failed.isEmpty()) {
            Throwable first = monitor.firstFailure();
            throw new RanksFailedException(n, failed, first == null ? failed.get(failed.firstKey()) : first);
        }
    }

    /**
     * The threads of one rank: its own and those it starts (platform threads join their creator's group). An
     * exception escaping one of them fails the rank, as under MPI, where Weft aborts the job on one.
     */
    private static final class RankThreads extends ThreadGroup {
        private final WorldMonitor monitor;
        private final int rank;

        RankThreads(WorldMonitor monitor, int rank) {
            super("weft-fake-rank-" + rank);
            this.monitor = monitor;
            this.rank = rank;
        }

        @Override
        public void uncaughtException(Thread t, Throwable e) {
            HeapReserve.releaseOn(e);
            monitor.finish(rank, e);
        }
    }

    /** Joins every rank until the deadline; then fires the watchdog and interrupts the ranks still running. */
    private static void joinAll(Thread[] threads, Duration timeout, WorldMonitor monitor) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            for (Thread t : threads) {
                join(t, deadline);
            }
            if (IntStream.range(0, threads.length).noneMatch(i -> threads[i].isAlive())) {
                return;
            }
            monitor.expire();
            for (Thread t : threads) {
                t.interrupt();
            }
            long graceEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS);
            for (Thread t : threads) {
                join(t, graceEnd);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WeftException(SourceLocation.UNKNOWN, "interrupted while running a fake world", e);
        }
    }

    /**
     * Joins {@code t} until {@code deadline} ({@link System#nanoTime}). An {@link OutOfMemoryError} here is another
     * thread's (a rank filled the shared heap): joining goes on, so that the ranks' failures are still reported.
     */
    private static void join(Thread t, long deadline) throws InterruptedException {
        while (t.isAlive() && deadline - System.nanoTime() > 0) {
            try {
                t.join(Duration.ofNanos(deadline - System.nanoTime()));
            } catch (OutOfMemoryError collateral) {
                // the rank's failure frees its memory; join again
            }
        }
    }
}
