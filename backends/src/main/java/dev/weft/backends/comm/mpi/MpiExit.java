package dev.weft.backends.comm.mpi;

import dev.weft.backends.timeline.Timeline;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.OptionalInt;

/**
 * How a rank ends once MPI is initialised, so that a failing rank ends the whole job within seconds instead of
 * crashing the JVM or leaving the other ranks blocked. {@link #install} adds a shutdown hook and a default
 * uncaught-exception handler:
 * <ul>
 *   <li>The program's normal end (every non-daemon thread finished, no thread inside MPI) finalises MPI.</li>
 *   <li>An exit while a thread is inside an MPI call ({@code mpirun} forwarding Ctrl-C as {@code SIGTERM} while
 *       the rank waits, or {@code System.exit} from another thread) calls no MPI function: finalising under a
 *       blocked call crashes the JVM (Open MPI) or fails an assertion (MPICH over UCX), and {@code MPI_Abort} is
 *       no safer beside it. The rank halts with the exit status (1 instead of 0).</li>
 *   <li>An exit on {@code SIGINT}, {@code SIGTERM} or {@code SIGHUP} halts likewise: the launcher or the user is
 *       ending the job, and MPI calls would only race its teardown.</li>
 *   <li>{@code System.exit(n)}, {@code n != 0}, calls {@code MPI_Abort(MPI_COMM_WORLD, n)}: the other ranks may be
 *       waiting for this one, so {@code MPI_Finalize} could wait for them forever. The job ends with status
 *       {@code n}.</li>
 *   <li>{@code System.exit(0)} finalises MPI, which waits for every rank to finalise too: right when all ranks
 *       exit, a hang when the others still wait for this one. After {@link #FINALIZE_WAIT} the rank says so and
 *       halts with status 1.</li>
 *   <li>An uncaught exception prints and calls {@code MPI_Abort(MPI_COMM_WORLD, 1)}.</li>
 * </ul>
 * Each of these exits but the program's end and a successful {@code MPI_Finalize} first prints this rank's flight
 * recorder (and writes its file under {@code WEFT_FLIGHT_DIR}), so that a hung job killed by its user or its
 * launcher says what every rank was doing; at the program's end the file is written too (for
 * {@code bin/weft doctor}: a rank that ended is part of the story of one that hangs). Every exit, a
 * {@code WEFT_COMM_TIMEOUT} included, writes the rank's timeline ({@code WEFT_TIMELINE}) before MPI ends, this
 * class and not the timeline's own hook; a file asked for that cannot be written makes an exit that would have
 * succeeded end with status 1, after {@code MPI_Finalize}. A halted rank ends the job because its launcher ends
 * every rank once one exits non-zero (Open MPI's {@code mpirun} by default, MPICH's Hydra always). Whether a thread is inside MPI is read from the threads'
 * stacks when the hook runs (a frame of {@link MpiLibrary}), which costs the calls themselves nothing; a thread
 * that is about to enter MPI is not seen, and its call fails after {@code MPI_Finalize}. The exit status comes
 * from {@link ExitStatus}; when it is unknown, {@code System.exit} finalises as for 0 (the JVM still exits with
 * its real status when that succeeds) and the other exits halt with status 1.
 */
final class MpiExit {
    /** How long {@code MPI_Finalize} after {@code System.exit(0)} may wait for the other ranks. */
    private static final Duration FINALIZE_WAIT = Duration.ofSeconds(10);

    private final MpiWorld world;
    private final MpiLibrary mpi;
    private final int rank;
    private final int size;

    private MpiExit(MpiWorld world, int rank, int size) {
        this.world = world;
        this.mpi = world.mpi;
        this.rank = rank;
        this.size = size;
    }

    /** Installs the shutdown hook and the uncaught-exception handler for this process's MPI world. */
    static void install(MpiWorld world, int rank, int size) {
        MpiExit exit = new MpiExit(world, rank, size);
        ExitStatus.watch();
        Runtime.getRuntime().addShutdownHook(new Thread(exit::atShutdown, "weft-mpi-exit"));
        Timeline.writtenByCaller();
        Thread.setDefaultUncaughtExceptionHandler(exit::uncaught);
    }

    private void atShutdown() {
        Map<Thread, StackTraceElement[]> stacks = Thread.getAllStackTraces();
        Cause cause = stacks.values().stream().map(Cause::of).max(Comparator.naturalOrder()).orElse(Cause.END);
        OptionalInt known = cause == Cause.END ? OptionalInt.of(0) : ExitStatus.last();
        int failure = known.orElse(0) == 0 ? 1 : known.getAsInt();
        for (Map.Entry<Thread, StackTraceElement[]> e : stacks.entrySet()) {
            String call = mpiCall(e.getValue());
            if (call != null && e.getKey() != Thread.currentThread()) {
                say("exit while thread \"%s\" is inside MPI (%s): ending this rank with status %d, without "
                        + "MPI_Finalize", e.getKey().getName(), call, failure);
                dump(cause == Cause.SIGNAL ? "signal" : "exit");
                halt(failure);
            }
        }
        switch (cause) {
            case SIGNAL -> {
                say("exit on a signal: ending this rank with status %d, without MPI_Finalize", failure);
                dump("signal");
                halt(failure);
            }
            case EXIT -> {
                if (known.orElse(0) != 0) {
                    say("exit with status %d before the program's end: aborting the MPI job", failure);
                    dump("exit");
                    abort(failure);
                }
                boolean written = Timeline.write();
                finishWithin(FINALIZE_WAIT);
                failUnless(written);
            }
            case END -> {
                boolean written = world.flight().writeFiles("end", System.err) & Timeline.write(); // both, always
                world.finish();
                failUnless(written);
            }
        }
    }

    /** Finalises MPI, or ends this rank with status 1 if that takes longer than {@code limit}. */
    private void finishWithin(Duration limit) {
        Thread watchdog = Thread.ofPlatform().daemon().name("weft-mpi-finalize-wait").start(() -> {
            try {
                Thread.sleep(limit);
            } catch (InterruptedException stop) {
                return;
            }
            say("System.exit before the other ranks ended: MPI_Finalize has waited %d s for them (are they "
                    + "waiting for this rank?); ending the job", limit.toSeconds());
            dump("exit");
            halt(1);
        });
        world.finish();
        watchdog.interrupt();
    }

    private void uncaught(Thread thread, Throwable failure) {
        System.out.flush();
        System.err.println("weft: rank " + rank + " of " + size + ": uncaught exception in thread \""
                + thread.getName() + "\", aborting the MPI job");
        failure.printStackTrace();
        dump("abort");
        abort(1);
    }

    /** Ends the job: {@code MPI_Abort} kills every rank; halting is the fallback should it return. */
    private void abort(int status) {
        System.err.flush();
        mpi.abort(mpi.commWorld, status);
        Runtime.getRuntime().halt(status);
    }

    /** After an exit that would succeed: ends the rank with status 1 when a file asked for was not written. */
    private void failUnless(boolean written) {
        if (!written) {
            say("ending with status 1: a file asked for was not written (above)");
            halt(1);
        }
    }

    /**
     * Prints this rank's flight recorder and writes its file ({@code WEFT_FLIGHT_DIR}) and its timeline
     * ({@code WEFT_TIMELINE}), before an exit that fails anyway.
     */
    private void dump(String reason) {
        world.flight().dump(reason, System.err);
        Timeline.write();
    }

    /** Ends this rank after its {@code WEFT_COMM_TIMEOUT} dumped its recorder: writes its timeline and halts. */
    static void timedOut() {
        Timeline.write();
        halt(1);
    }

    /** Ends this rank at once with {@code status}, without shutdown hooks. */
    static void halt(int status) {
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }

    private void say(String format, Object... args) {
        System.out.flush();
        System.err.print(String.format("weft: rank %d of %d: %s%n", rank, size, String.format(format, args)));
    }

    /** Why the JVM shuts down, as a thread's stack shows it; the later constant wins across threads. */
    private enum Cause {
        /** The last non-daemon thread ended. */
        END,
        /** A call of {@code Runtime.exit} ({@code System.exit}). */
        EXIT,
        /** The JVM's handler of {@code SIGINT}, {@code SIGTERM} or {@code SIGHUP}, which calls it too. */
        SIGNAL;

        static Cause of(StackTraceElement[] stack) {
            boolean exit = false;
            for (StackTraceElement f : stack) {
                if (f.getClassName().equals("java.lang.Shutdown") && f.getMethodName().equals("exit")) {
                    exit = true;
                } else if (exit && f.getClassName().startsWith("java.lang.Terminator")) {
                    return SIGNAL;
                }
            }
            return exit ? EXIT : END;
        }
    }

    /** The {@link MpiLibrary} method this stack is in, or null. */
    private static String mpiCall(StackTraceElement[] stack) {
        for (StackTraceElement f : stack) {
            if (f.getClassName().equals(MpiLibrary.class.getName())) {
                return f.getMethodName();
            }
        }
        return null;
    }
}
