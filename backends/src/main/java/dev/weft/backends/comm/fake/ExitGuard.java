package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.flight.FlightWorld;
import dev.weft.backends.timeline.Timeline;
import dev.weft.spi.SourceLocation;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A shutdown hook, installed while a fake world runs, that keeps one rank's {@code System.exit} from ending the
 * others unseen, as it could not end their processes under MPI. When the JVM starts to exit, the other ranks get
 * two seconds to end or to call {@code System.exit} too (as every rank of a job may); if some still run then, it
 * prints which ones and what they were doing, with every rank's flight recorder, writes the timeline
 * ({@code WEFT_TIMELINE}) and halts with status 1.
 * Otherwise the exit keeps its status.
 */
final class ExitGuard {
    private static final int USER_FRAMES = 6;
    /** How long the other ranks get to end, or to call {@code System.exit} too, as every rank of a job may. */
    private static final long GRACE_MILLIS = 2000;
    private static final long POLL_MILLIS = 20;

    private final Thread[] ranks;
    private final WorldMonitor monitor;
    private final FlightWorld flight;
    private final Thread hook;

    private ExitGuard(Thread[] ranks, WorldMonitor monitor, FlightWorld flight) {
        this.ranks = ranks.clone();
        this.monitor = monitor;
        this.flight = flight;
        this.hook = new Thread(this::check, "weft-fake-exit-guard");
    }

    /** Installs the guard for the rank threads {@code ranks} (index = world rank) and their recorders. */
    static ExitGuard install(Thread[] ranks, WorldMonitor monitor, FlightWorld flight) {
        ExitGuard guard = new ExitGuard(ranks, monitor, flight);
        Runtime.getRuntime().addShutdownHook(guard.hook);
        return guard;
    }

    /** Removes the guard once the world has ended; a no-op when the JVM is already exiting. */
    void remove() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
            // the hook runs, and finds no rank running
        }
    }

    private void check() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS);
        List<Integer> running = running();
        while (!running.isEmpty() && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                break;
            }
            running = running();
        }
        if (running.isEmpty()) {
            return;
        }
        StringBuilder sb = new StringBuilder("weft: ").append(cause(exitingThreads())).append(" while ")
                .append(running.size() == 1 ? "rank " : "ranks ")
                .append(String.join(", ", running.stream().map(String::valueOf).toList()))
                .append(running.size() == 1 ? " was" : " were")
                .append(" still running, so the job fails with status 1 (fake ranks are threads of one JVM: end a rank"
                        + " by returning from main, fail it by throwing)");
        for (int r : running) {
            sb.append("\n  rank ").append(r).append(": ").append(state(r));
            userFrames(ranks[r]).forEach(f -> sb.append("\n      at ").append(f));
        }
        System.out.flush();
        System.err.println(sb);
        flight.dump("exit", System.err);
        Timeline.write();
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }

    /** The ranks whose body still runs and that are not calling {@code System.exit} themselves. */
    private List<Integer> running() {
        Set<Thread> exiting = exitingThreads();
        List<Integer> running = new ArrayList<>();
        for (int r = 0; r < ranks.length; r++) {
            if (ranks[r].isAlive() && !monitor.ended(r) && !exiting.contains(ranks[r])) {
                running.add(r);
            }
        }
        return running;
    }

    /** The threads calling {@code System.exit} (or handling the signal that ends the JVM). */
    private static Set<Thread> exitingThreads() {
        Set<Thread> exiting = new LinkedHashSet<>();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            for (StackTraceElement f : e.getValue()) {
                if (f.getClassName().equals("java.lang.Shutdown") && f.getMethodName().equals("exit")) {
                    exiting.add(e.getKey());
                }
            }
        }
        return exiting;
    }

    private String cause(Set<Thread> exitingThreads) {
        if (exitingThreads.isEmpty()) {
            return "the JVM is exiting";
        }
        Thread exiting = exitingThreads.iterator().next();
        for (int r = 0; r < ranks.length; r++) {
            if (exiting == ranks[r]) {
                return "System.exit was called on rank " + r;
            }
        }
        ThreadGroup g = exiting.getThreadGroup();
        for (int r = 0; r < ranks.length; r++) {
            if (g != null && g == ranks[r].getThreadGroup()) {
                return "System.exit was called on thread \"" + exiting.getName() + "\" of rank " + r;
            }
        }
        return "the JVM is exiting (System.exit on thread \"" + exiting.getName() + "\")";
    }

    private String state(int rank) {
        try {
            if (monitor.lock.tryLock(1, TimeUnit.SECONDS)) {
                try {
                    return monitor.state(rank);
                } finally {
                    monitor.lock.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "running";
    }

    /** The innermost frames of {@code t} from the first of the user's code on: where the rank's code is. */
    private static List<StackTraceElement> userFrames(Thread t) {
        List<StackTraceElement> frames = new ArrayList<>();
        for (StackTraceElement f : t.getStackTrace()) {
            if (!frames.isEmpty() || !SourceLocation.isInternal(f.getClassName())) {
                frames.add(f);
            }
            if (frames.size() == USER_FRAMES) {
                break;
            }
        }
        return frames;
    }
}
