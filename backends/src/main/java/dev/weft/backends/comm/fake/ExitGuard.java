package dev.weft.backends.comm.fake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A shutdown hook, installed while a fake world runs, that keeps one rank's {@code System.exit} from ending the
 * others unseen, as it could not end their processes under MPI: when the JVM starts to exit while ranks other than
 * the one calling {@code System.exit} still run, it prints which ranks were running and what they were doing, and
 * halts with status 1. An exit once every other rank has ended keeps its status.
 */
final class ExitGuard {
    private static final int USER_FRAMES = 6;

    private final Thread[] ranks;
    private final WorldMonitor monitor;
    private final Thread hook;

    private ExitGuard(Thread[] ranks, WorldMonitor monitor) {
        this.ranks = ranks.clone();
        this.monitor = monitor;
        this.hook = new Thread(this::check, "weft-fake-exit-guard");
    }

    /** Installs the guard for the rank threads {@code ranks} (index = world rank). */
    static ExitGuard install(Thread[] ranks, WorldMonitor monitor) {
        ExitGuard guard = new ExitGuard(ranks, monitor);
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
        Thread exiting = exitingThread();
        List<Integer> running = new ArrayList<>();
        for (int r = 0; r < ranks.length; r++) {
            if (ranks[r].isAlive() && ranks[r] != exiting) {
                running.add(r);
            }
        }
        if (running.isEmpty()) {
            return;
        }
        StringBuilder sb = new StringBuilder("weft: ").append(cause(exiting)).append(" while ")
                .append(running.size() == 1 ? "rank " : "ranks ")
                .append(String.join(", ", running.stream().map(String::valueOf).toList()))
                .append(running.size() == 1 ? " was" : " were").append(" still running, so the job fails with status 1"
                        + " (fake ranks are threads of one JVM: end a rank by returning from main, fail it by throwing)");
        for (int r : running) {
            sb.append("\n  rank ").append(r).append(": ").append(state(r));
            userFrames(ranks[r]).forEach(f -> sb.append("\n      at ").append(f));
        }
        System.out.flush();
        System.err.println(sb);
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }

    /** The thread calling {@code System.exit} (or handling the signal that ends the JVM), or null. */
    private static Thread exitingThread() {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            for (StackTraceElement f : e.getValue()) {
                if (f.getClassName().equals("java.lang.Shutdown") && f.getMethodName().equals("exit")) {
                    return e.getKey();
                }
            }
        }
        return null;
    }

    private String cause(Thread exiting) {
        if (exiting == null) {
            return "the JVM is exiting";
        }
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

    /** The innermost frames of {@code t} outside the JDK and the fake runtime: where the rank's code is. */
    private static List<StackTraceElement> userFrames(Thread t) {
        List<StackTraceElement> frames = new ArrayList<>();
        for (StackTraceElement f : t.getStackTrace()) {
            String c = f.getClassName();
            boolean internal = c.startsWith("java.") || c.startsWith("jdk.") || c.startsWith("sun.")
                    || c.startsWith(ExitGuard.class.getPackageName() + ".");
            if (!internal || !frames.isEmpty()) {
                frames.add(f);
            }
            if (frames.size() == USER_FRAMES) {
                break;
            }
        }
        return frames;
    }
}
