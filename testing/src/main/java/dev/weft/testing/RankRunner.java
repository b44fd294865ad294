package dev.weft.testing;

import dev.weft.comm.Comm;
import dev.weft.spi.InProcessRanks;

/**
 * Runs a body on N fake ranks (in one JVM, one thread each, {@code Comm.world()} bound to each thread's rank) and
 * turns rank failures into one {@link AssertionError} that names each rank. {@link Ranks} runs test methods so;
 * call this directly for a body that needs its own setup around the ranks.
 */
public final class RankRunner {
    /** A test body run on one rank, given that rank's world. */
    @FunctionalInterface
    public interface RankBody {
        void run(Comm world) throws Throwable;
    }

    private RankRunner() {
    }

    /**
     * Runs {@code body} on {@code n} fake ranks and returns when all have passed.
     *
     * @throws AssertionError listing each failing rank with its message; its cause is the rank that failed first,
     *                        and the other ranks' failures are suppressed by it, so every stack trace is shown
     */
    public static void run(int n, RankBody body) {
        InProcessRanks.Failures failures = InProcessRanks.load().run(n, body::run);
        if (!failures.none()) {
            throw report(n, failures);
        }
    }

    private static AssertionError report(int n, InProcessRanks.Failures failures) {
        StringBuilder sb = new StringBuilder();
        sb.append(failures.byRank().size()).append(" of ").append(n).append(n == 1 ? " rank failed" : " ranks failed");
        failures.byRank().forEach((rank, t) -> sb.append("\n  rank ").append(rank).append(": ")
                .append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()));
        Throwable first = failures.first() != null ? failures.first() : failures.byRank().values().iterator().next();
        AssertionError error = new AssertionError(sb.toString(), first);
        failures.byRank().values().stream().filter(t -> t != first).forEach(error::addSuppressed);
        return error;
    }
}
