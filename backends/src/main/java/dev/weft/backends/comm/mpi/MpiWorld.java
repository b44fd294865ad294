package dev.weft.backends.comm.mpi;

import dev.weft.spi.CoreShare;
import dev.weft.spi.Setting;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.OutstandingRequests;
import dev.weft.backends.comm.ThreadLevel;
import dev.weft.backends.comm.flight.FlightCommunicator;
import dev.weft.backends.comm.flight.FlightRecorder;
import dev.weft.backends.comm.flight.FlightSettings;
import dev.weft.backends.comm.flight.FlightWorld;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * This process's MPI runtime, set up on first use: loads the library ({@link MpiLibrary}), calls
 * {@code MPI_Init_thread} asking for the thread level {@code WEFT_MPI_THREAD_LEVEL} chooses (by default
 * {@code MPI_THREAD_SINGLE}: only the initialising thread communicates; see {@link ThreadLevel}), and wraps
 * {@code MPI_COMM_WORLD} as the communicator {@code world}. It then installs a shutdown hook and an
 * uncaught-exception handler ({@link MpiExit}) that finalise MPI at the program's normal end and otherwise end the
 * whole job, so that a failing rank neither crashes its JVM nor leaves the other ranks blocked. Both run on threads
 * of their own: finalising happens after the program's last call, and aborting ends the job whatever the other
 * threads are doing, so neither breaks the thread level's rule in a way MPI can observe. The world keeps a flight
 * recorder of this rank's communication ({@link FlightWorld}): an operation blocked longer than
 * {@code WEFT_COMM_TIMEOUT} prints it and ends the job, as do the exits above that end it abnormally. With
 * {@code WEFT_DEBUG=1} the library and the thread level MPI provided are printed to stderr.
 */
public final class MpiWorld {
    /**
     * Environment variable choosing the MPI thread level: {@code single} (default), {@code funneled},
     * {@code serialized} or {@code multiple}.
     */
    public static final String THREAD_LEVEL_ENV = ThreadLevel.ENV;
    private static MpiWorld instance;

    final MpiLibrary mpi;
    private final ThreadLevel threadLevel;
    /** The only thread that may communicate, or null when any may. */
    private final Thread initialThread;
    private final Communicator world;
    private final FlightWorld flight;
    private final OutstandingRequests requests = new OutstandingRequests();
    private MpiUserOp userOp;

    private MpiWorld(MpiLibrary mpi) {
        this.mpi = mpi;
        if (mpi.initialized()) {
            throw new IllegalStateException("MPI was initialised outside Weft");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment provided = arena.allocate(ValueLayout.JAVA_INT);
            int rc = mpi.initThread(ThreadLevel.requested().code(), provided);
            if (rc != MpiLibrary.SUCCESS) {
                throw new IllegalStateException("MPI_Init_thread failed: " + mpi.errorString(rc));
            }
            threadLevel = ThreadLevel.of(provided.get(ValueLayout.JAVA_INT, 0));
        }
        initialThread = threadLevel.initialThreadOnly() ? Thread.currentThread() : null;
        MpiCommunicator raw = new MpiCommunicator(this, mpi.commWorld, "world", true);
        FlightSettings settings = FlightSettings.fromEnvironment();
        FlightRecorder recorder = FlightWorld.recorder(raw.rank(), raw.size(), settings,
                threadLevel == ThreadLevel.MULTIPLE);
        // A thread blocked in MPI cannot be interrupted, and MPI_Abort beside it is unsafe (see MpiExit): halt.
        flight = FlightWorld.start(List.of(recorder), settings, (rank, blocked, message) -> MpiExit.timedOut(),
                "ending the job");
        world = FlightCommunicator.of(raw, raw.privateDup(SourceLocation.capture()), recorder);
        MpiExit.install(this, world.rank(), world.size());
        if (Setting.DEBUG.on()) {
            System.err.print(String.format("r%d | MPI %s, %s, %d ranks; %s, %s%n", world.rank(), mpi, threadLevel,
                    world.size(), CoreShare.describe(), MpiEnvironment.waiting(mpi.flavor)));
        }
    }

    /** The world communicator of this process, initialising MPI on the first call. */
    public static synchronized Communicator world() {
        return get().world;
    }

    /**
     * The MPI thread level granted by {@code MPI_Init_thread} (0 is {@code MPI_THREAD_SINGLE}, 3
     * {@code MPI_THREAD_MULTIPLE}).
     */
    public static synchronized int threadLevel() {
        return get().threadLevel.code();
    }

    /**
     * Fails when the thread level lets only the initialising thread communicate and the caller is another one.
     *
     * @param op   the operation, for the message
     * @param comm the communicator's name, for the message
     */
    void checkThread(String op, String comm, SourceLocation where) {
        if (!mayCommunicate()) {
            throw new CommException(where, String.format("%s on '%s' from thread \"%s\": MPI runs at %s, so only "
                    + "the thread that initialised it (\"%s\") may communicate; set %s=multiple (or serialized) "
                    + "to communicate from other threads", op, comm, Thread.currentThread().getName(), threadLevel,
                    initialThread.getName(), THREAD_LEVEL_ENV));
        }
    }

    /** Whether the calling thread may communicate (see {@link #checkThread}). */
    boolean mayCommunicate() {
        return initialThread == null || Thread.currentThread() == initialThread;
    }

    /** The loaded library, like {@code libmpi.so.40 (Open MPI v4.1.4, ...)}. */
    public static synchronized String library() {
        return get().mpi.toString();
    }

    private static MpiWorld get() {
        if (instance == null) {
            instance = new MpiWorld(MpiLibrary.load());
        }
        return instance;
    }

    /** This rank's flight recorder. */
    FlightWorld flight() {
        return flight;
    }

    /** The custom reduce operator, created on first use. */
    synchronized MpiUserOp userOp() {
        if (userOp == null) {
            userOp = new MpiUserOp(mpi, mpi.commWorld);
        }
        return userOp;
    }

    /** The requests this rank started and has not waited. */
    OutstandingRequests requests() {
        return requests;
    }

    /**
     * Reports the requests never waited on stderr, frees the custom reduce operator and finalises MPI, unless that
     * was done.
     */
    synchronized void finish() {
        if (mpi.finalized()) {
            return;
        }
        String neverWaited = requests.neverWaited();
        if (neverWaited != null) {
            System.err.print(String.format("weft: rank %d of %d: %s%n", world.rank(), world.size(), neverWaited));
        }
        if (userOp != null) {
            userOp.free();
        }
        mpi.finalizeMpi();
    }
}
