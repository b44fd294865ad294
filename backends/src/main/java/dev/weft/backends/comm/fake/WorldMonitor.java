package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.OutstandingRequests;
import dev.weft.backends.comm.ThreadLevel;
import dev.weft.spi.SourceLocation;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state of every rank of one fake world, and the single lock that guards all of the world's communication
 * state. A thread blocks only through {@link #await}, which re-checks after every change and at least every
 * {@value #POLL_MILLIS} ms whether it can go on, whether a peer it needs has ended, whether the whole world is
 * deadlocked, and whether the watchdog expired; so no wait is unbounded.
 *
 * <p>A rank counts as blocked while its own thread (the one running its body) is blocked in a communication. At
 * the thread levels that let other threads communicate ({@code serialized}, {@code multiple}) it also needs each
 * other platform thread of the rank (of its thread group: the threads it started, and theirs) to be blocked in a
 * communication or waiting without a timeout, since a running one may still send; an idle fork-join worker does
 * not count as running.
 */
final class WorldMonitor {
    private static final long POLL_MILLIS = 50;

    private enum Phase { RUNNING, FINISHED, FAILED }

    private static final class Rank {
        Phase phase = Phase.RUNNING;
        /** The thread running the rank's body; null in a one-rank process world, where any thread is the rank's. */
        Thread main;
        ThreadGroup group;
        /** The rank's threads blocked in a communication, in the order they blocked. */
        final Map<Thread, Wait> blocked = new LinkedHashMap<>();
        Throwable failure;
        /** Why the rank's communication timed out ({@code WEFT_COMM_TIMEOUT}), or null. */
        String timeout;
        final OutstandingRequests requests = new OutstandingRequests();
    }

    final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Rank[] ranks;
    private final FakeSettings settings;
    private final long deadlineNanos;
    private String deadlockReport;
    private String expiredReport;
    private Throwable firstFailure;

    WorldMonitor(int size, FakeSettings settings) {
        this.ranks = new Rank[size];
        for (int i = 0; i < size; i++) {
            ranks[i] = new Rank();
        }
        this.settings = settings;
        this.deadlineNanos = System.nanoTime() + settings.timeout().toNanos();
    }

    int size() {
        return ranks.length;
    }

    FakeSettings settings() {
        return settings;
    }

    /** The requests {@code worldRank} started and has not waited; guarded by their own lock, not the world's. */
    OutstandingRequests requests(int worldRank) {
        return ranks[worldRank].requests;
    }

    /** Records that the calling thread runs {@code worldRank}'s body; it calls this before running it. */
    void started(int worldRank) {
        lock.lock();
        try {
            ranks[worldRank].main = Thread.currentThread();
            ranks[worldRank].group = Thread.currentThread().getThreadGroup();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Fails with a {@link CommException} when the calling thread may not communicate for {@code worldRank} now: at
     * any thread level a thread of another rank (a communicator shared between fake ranks, say through a static
     * field, which processes under {@code mpirun} cannot share); at {@code single} and {@code funneled} any thread
     * but the rank's own, at {@code serialized} a thread calling while another thread of the rank is blocked in a communication.
     *
     * @param op   the operation, for the message
     * @param comm the communicator's name, for the message
     */
    void checkThread(int worldRank, String op, String comm, SourceLocation where) {
        Thread me = Thread.currentThread();
        ThreadLevel level = settings.level();
        lock.lock();
        try {
            Rank r = ranks[worldRank];
            int owner = rankOf(me);
            if (owner >= 0 && owner != worldRank) {
                throw new CommException(where, String.format("%s on '%s': rank %d's communicator used on rank %d's"
                        + " thread (\"%s\"): a Comm kept in a static field (or otherwise shared between fake ranks)"
                        + " reaches every rank, since fake ranks are threads of one JVM, whereas under mpirun each"
                        + " rank is a process with its own; keep the Comm in a local or an instance field, or take"
                        + " Comm.world() on each rank", op, comm, worldRank, owner, me.getName()));
            }
            if (level.initialThreadOnly() && r.main != null && me != r.main) {
                throw new CommException(where, String.format("%s on '%s' from thread \"%s\": fake ranks run at %s, "
                        + "so only rank %d's own thread (\"%s\") may communicate, as only the thread that "
                        + "initialised MPI may under mpirun; set %s=multiple (or serialized) to communicate from other "
                        + "threads", op, comm, me.getName(), level, worldRank, r.main.getName(), ThreadLevel.ENV));
            }
            if (level == ThreadLevel.SERIALIZED) {
                for (Map.Entry<Thread, Wait> other : r.blocked.entrySet()) {
                    if (other.getKey() != me) {
                        throw new CommException(where, String.format("%s on '%s' from thread \"%s\" while thread "
                                + "\"%s\" of the same rank is blocked in %s at %s: at %s the threads of a rank must "
                                + "not communicate at once; set %s=multiple to allow it", op, comm, me.getName(),
                                other.getKey().getName(), other.getValue().describe(), other.getValue().where(), level,
                                ThreadLevel.ENV));
                    }
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The rank whose thread {@code t} is (its own thread, or one it started, in its thread group), or -1 for a
     * thread of no rank; the lock must be held.
     */
    private int rankOf(Thread t) {
        ThreadGroup group = t.getThreadGroup();
        for (int i = 0; i < ranks.length; i++) {
            if (ranks[i].main == t || (group != null && ranks[i].group == group && ranks[i].main != null)) {
                return i;
            }
        }
        return -1;
    }

    /** Wakes every blocked rank to re-check its wait; call with the lock held after changing shared state. */
    void changed() {
        changed.signalAll();
    }

    /**
     * Blocks the calling thread of {@code worldRank} until {@code wait} is ready; the lock must be held. Throws a
     * {@link CommException} when a peer the wait needs has failed or finished, or the watchdog expired, and a
     * {@link DeadlockException} when every live rank is blocked and none can proceed.
     */
    void await(int worldRank, Wait wait) {
        Rank self = ranks[worldRank];
        Thread me = Thread.currentThread();
        self.blocked.put(me, wait);
        try {
            while (!wait.ready()) {
                if (deadlockReport != null) {
                    throw new DeadlockException(wait.where(), deadlockReport);
                }
                if (expiredReport != null) {
                    throw new CommException(wait.where(), expiredReport);
                }
                if (self.timeout != null) {
                    throw new CommException(wait.where(), self.timeout);
                }
                failIfPeerEnded(wait);
                if (System.nanoTime() - deadlineNanos >= 0) {
                    expire();
                } else if (noneCanProceed()) {
                    deadlockReport = report("deadlock: every live rank is blocked and none can proceed");
                    changed.signalAll();
                } else {
                    try {
                        changed.await(POLL_MILLIS, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new CommException(wait.where(), wait.describe() + " was interrupted");
                    }
                }
            }
        } finally {
            self.blocked.remove(me);
        }
    }

    /**
     * Records that a rank's body returned ({@code failure == null}) or threw, or that an exception escaped another
     * of its threads; a rank that failed stays failed, with its first failure.
     */
    void finish(int worldRank, Throwable failure) {
        lock.lock();
        try {
            Rank r = ranks[worldRank];
            if (r.phase == Phase.FAILED) {
                return;
            }
            r.phase = failure == null ? Phase.FINISHED : Phase.FAILED;
            r.failure = failure;
            if (failure != null && firstFailure == null) {
                firstFailure = failure;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Fails every communication of {@code worldRank} blocked now or later with {@code message}: its operation timed
     * out ({@code WEFT_COMM_TIMEOUT}).
     */
    void timeOut(int worldRank, String message) {
        lock.lock();
        try {
            ranks[worldRank].timeout = message;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Fires the watchdog: every rank blocked now or later fails with the state report, which is returned. */
    String expire() {
        lock.lock();
        try {
            if (expiredReport == null) {
                expiredReport = report(String.format(
                        "fake world timed out after %s s (set -Dweft.fake.timeout=<seconds> to change)",
                        BigDecimal.valueOf(settings.timeout().toMillis(), 3).stripTrailingZeros().toPlainString()));
                changed.signalAll();
            }
            return expiredReport;
        } finally {
            lock.unlock();
        }
    }

    /** Whether rank {@code worldRank}'s body has returned or thrown, or the rank failed otherwise. */
    boolean ended(int worldRank) {
        lock.lock();
        try {
            return ranks[worldRank].phase != Phase.RUNNING;
        } finally {
            lock.unlock();
        }
    }

    /** The first failure of rank {@code worldRank}, or null. */
    Throwable failure(int worldRank) {
        lock.lock();
        try {
            return ranks[worldRank].failure;
        } finally {
            lock.unlock();
        }
    }

    /** The exception of the rank that failed first, or null. */
    Throwable firstFailure() {
        lock.lock();
        try {
            return firstFailure;
        } finally {
            lock.unlock();
        }
    }

    private void failIfPeerEnded(Wait wait) {
        for (int peer : wait.awaitedWorldRanks()) {
            Rank p = ranks[peer];
            if (p.phase == Phase.FAILED) {
                throw new CommException(wait.where(), String.format("%s cannot complete: world rank %d failed: %s",
                        wait.describe(), peer, summary(p.failure)), p.failure);
            }
            if (p.phase == Phase.FINISHED) {
                throw new CommException(wait.where(), String.format("%s cannot complete: world rank %d has finished",
                        wait.describe(), peer));
            }
        }
    }

    private boolean noneCanProceed() {
        for (Rank r : ranks) {
            if (r.phase == Phase.RUNNING && (r.main == null ? r.blocked.isEmpty() : !r.blocked.containsKey(r.main))) {
                return false;
            }
            for (Wait w : r.blocked.values()) {
                if (w.ready() || awaitsEndedPeer(w)) {
                    return false;
                }
            }
            if (r.phase == Phase.RUNNING && !settings.level().initialThreadOnly() && anotherThreadRuns(r)) {
                return false;
            }
        }
        return true;
    }

    /** Whether a thread of {@code r} other than its own and those blocked here may still communicate. */
    private boolean anotherThreadRuns(Rank r) {
        if (r.group == null) {
            return false;
        }
        Thread[] threads = new Thread[r.group.activeCount() + 16];
        int n = r.group.enumerate(threads);
        for (int i = 0; i < n; i++) {
            Thread t = threads[i];
            if (t == r.main || r.blocked.containsKey(t)) {
                continue;
            }
            Thread.State s = t.getState();
            if (s == Thread.State.RUNNABLE || lock.hasQueuedThread(t)
                    || s == Thread.State.TIMED_WAITING && !(t instanceof ForkJoinWorkerThread)) {
                return true;
            }
        }
        return false;
    }

    private boolean awaitsEndedPeer(Wait wait) {
        for (int peer : wait.awaitedWorldRanks()) {
            Phase p = ranks[peer].phase;
            if (p == Phase.FINISHED || p == Phase.FAILED) {
                return true;
            }
        }
        return false;
    }

    private String report(String headline) {
        StringBuilder sb = new StringBuilder(headline);
        Set<String> hints = new LinkedHashSet<>();
        for (int i = 0; i < ranks.length; i++) {
            sb.append("\n  rank ").append(i).append(": ").append(state(i));
            ranks[i].blocked.values().stream().map(Wait::hint).filter(Objects::nonNull).forEach(hints::add);
        }
        hints.forEach(h -> sb.append('\n').append(h));
        return sb.toString();
    }

    /**
     * What rank {@code worldRank} does, like {@code blocked in recv(4 x f32) on 'world' from rank 1 tag 7 at
     * User.java:12}, {@code running}, {@code finished}, with a line for each other thread of it blocked in a
     * communication; the lock must be held.
     */
    String state(int worldRank) {
        Rank r = ranks[worldRank];
        StringBuilder sb = new StringBuilder();
        Wait own = r.main == null ? r.blocked.values().stream().findFirst().orElse(null) : r.blocked.get(r.main);
        switch (r.phase) {
            case RUNNING -> sb.append(own == null ? "running" : "blocked in " + own.describe() + " at " + own.where());
            case FINISHED -> sb.append("finished");
            case FAILED -> sb.append("failed: ").append(summary(r.failure));
        }
        r.blocked.forEach((t, w) -> {
            if (w != own) {
                sb.append("\n    thread \"").append(t.getName()).append("\" blocked in ").append(w.describe())
                        .append(" at ").append(w.where());
            }
        });
        return sb.toString();
    }

    /** A throwable's class and the first line of its message. */
    static String summary(Throwable t) {
        String msg = t.getMessage();
        String name = t.getClass().getSimpleName();
        if (msg == null) {
            return name;
        }
        int nl = msg.indexOf('\n');
        return name + ": " + (nl < 0 ? msg : msg.substring(0, nl));
    }
}
