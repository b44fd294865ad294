package dev.weft.testing;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.fake.RanksFailedException;
import dev.weft.comm.Comm;
import dev.weft.spi.CommBinding;
import java.util.Map;

/** Runs a body on N fake ranks and turns rank failures into one {@link AssertionError} that names each rank. */
public final class RankRunner {
    /** A test body run on one rank. */
    @FunctionalInterface
    public interface RankBody {
        void run(Comm world) throws Throwable;
    }

    private RankRunner() {
    }

    /**
     * Runs {@code body} on {@code n} fake ranks with {@code Comm.world()} bound on each rank's thread.
     *
     * @throws AssertionError listing each failing rank with its message; its cause is the first rank's failure,
     *                        and the other ranks' failures are suppressed by it, so every stack trace is shown
     */
    public static void run(int n, RankBody body) {
        try {
            FakeWorld.run(n, world -> CommBinding.with(world, () -> {
                try {
                    body.run(Comm.of(world));
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new RankBodyException(t);
                }
                return null;
            }));
        } catch (RanksFailedException e) {
            throw report(n, e.failures());
        }
    }

    private static AssertionError report(int n, Map<Integer, Throwable> failures) {
        StringBuilder sb = new StringBuilder();
        sb.append(failures.size()).append(" of ").append(n).append(" ranks failed");
        Throwable first = null;
        for (Map.Entry<Integer, Throwable> f : failures.entrySet()) {
            Throwable t = unwrap(f.getValue());
            if (first == null) {
                first = t;
            }
            sb.append("\n  rank ").append(f.getKey()).append(": ").append(t.getClass().getSimpleName()).append(": ")
                    .append(t.getMessage());
        }
        AssertionError error = new AssertionError(sb.toString(), first);
        failures.values().stream().map(RankRunner::unwrap).filter(t -> t != error.getCause())
                .forEach(error::addSuppressed);
        return error;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof RankBodyException w ? w.getCause() : t;
    }

    /** Carries a checked exception out of a rank's body. */
    private static final class RankBodyException extends RuntimeException {
        RankBodyException(Throwable cause) {
            super(cause);
        }
    }
}
