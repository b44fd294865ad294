package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.CommException;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state of every rank of one fake world, and the single lock that guards all of the world's communication
 * state. A rank blocks only through {@link #await}, which re-checks after every change and at least every
 * {@value #POLL_MILLIS} ms whether it can go on, whether a peer it needs has ended, whether the whole world is
 * deadlocked, and whether the watchdog expired; so no wait is unbounded.
 */
final class WorldMonitor {
    private static final long POLL_MILLIS = 50;

    private enum Phase { RUNNING, BLOCKED, FINISHED, FAILED }

    private static final class Rank {
        Phase phase = Phase.RUNNING;
        Wait wait;
        Throwable failure;
    }

    final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Rank[] ranks;
    private final Duration timeout;
    private final long deadlineNanos;
    private String deadlockReport;
    private String expiredReport;
    private Throwable firstFailure;

    WorldMonitor(int size, Duration timeout) {
        this.ranks = new Rank[size];
        for (int i = 0; i < size; i++) {
            ranks[i] = new Rank();
        }
        this.timeout = timeout;
        this.deadlineNanos = System.nanoTime() + timeout.toNanos();
    }

    int size() {
        return ranks.length;
    }

    /** Wakes every blocked rank to re-check its wait; call with the lock held after changing shared state. */
    void changed() {
        changed.signalAll();
    }

    /**
     * Blocks {@code worldRank} until {@code wait} is ready; the lock must be held. Throws a {@link CommException}
     * when a peer the wait needs has failed or finished, or the watchdog expired, and a
     * {@link DeadlockException} when every live rank is blocked and none can proceed.
     */
    void await(int worldRank, Wait wait) {
        Rank self = ranks[worldRank];
        self.phase = Phase.BLOCKED;
        self.wait = wait;
        try {
            while (!wait.ready()) {
                if (deadlockReport != null) {
                    throw new DeadlockException(wait.where(), deadlockReport);
                }
                if (expiredReport != null) {
                    throw new CommException(wait.where(), expiredReport);
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
            self.phase = Phase.RUNNING;
            self.wait = null;
        }
    }

    /** Records that a rank's body returned ({@code failure == null}) or threw. */
    void finish(int worldRank, Throwable failure) {
        lock.lock();
        try {
            Rank r = ranks[worldRank];
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

    /** Fires the watchdog: every rank blocked now or later fails with the state report, which is returned. */
    String expire() {
        lock.lock();
        try {
            if (expiredReport == null) {
                expiredReport = report(String.format(
                        "fake world timed out after %s s (set -Dweft.fake.timeout=<seconds> to change)",
                        BigDecimal.valueOf(timeout.toMillis(), 3).stripTrailingZeros().toPlainString()));
                changed.signalAll();
            }
            return expiredReport;
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
            if (r.phase == Phase.RUNNING) {
                return false;
            }
            if (r.phase == Phase.BLOCKED && (r.wait.ready() || awaitsEndedPeer(r.wait))) {
                return false;
            }
        }
        return true;
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
        for (int i = 0; i < ranks.length; i++) {
            Rank r = ranks[i];
            sb.append("\n  rank ").append(i).append(": ");
            switch (r.phase) {
                case RUNNING -> sb.append("running");
                case BLOCKED -> sb.append("blocked in ").append(r.wait.describe()).append(" at ").append(r.wait.where());
                case FINISHED -> sb.append("finished");
                case FAILED -> sb.append("failed: ").append(summary(r.failure));
            }
        }
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
