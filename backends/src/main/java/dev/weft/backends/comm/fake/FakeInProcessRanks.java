package dev.weft.backends.comm.fake;

import dev.weft.comm.Comm;
import dev.weft.spi.CommBinding;
import dev.weft.spi.InProcessRanks;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/** {@link InProcessRanks} on a {@link FakeWorld}, for test support outside this module. */
public final class FakeInProcessRanks implements InProcessRanks {
    @Override
    public Failures run(int n, Body body) {
        try {
            FakeWorld.run(n, world -> CommBinding.with(world, () -> {
                try {
                    body.run(Comm.of(world));
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new CheckedFailure(t);
                }
                return null;
            }));
            return new Failures(Collections.emptySortedMap(), null);
        } catch (RanksFailedException e) {
            SortedMap<Integer, Throwable> byRank = new TreeMap<>();
            e.failures().forEach((rank, t) -> byRank.put(rank, unwrap(t)));
            return new Failures(Collections.unmodifiableSortedMap(byRank), unwrap(e.getCause()));
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CheckedFailure c ? c.getCause() : t;
    }

    /** Carries a checked exception out of a rank's body. */
    private static final class CheckedFailure extends RuntimeException {
        CheckedFailure(Throwable cause) {
            super(cause);
        }
    }
}
