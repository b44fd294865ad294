package dev.weft.backends.comm.fake;

import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One or more ranks of a {@link FakeWorld} failed. The message has one line per failed rank; the cause is the
 * rank that failed first (usually the root cause of the others), and the other ranks' exceptions are suppressed.
 */
public final class RanksFailedException extends WeftException {
    private final SortedMap<Integer, Throwable> failures;

    RanksFailedException(int worldSize, SortedMap<Integer, Throwable> failures, Throwable first) {
        super(SourceLocation.UNKNOWN, message(worldSize, failures), first);
        this.failures = Collections.unmodifiableSortedMap(new TreeMap<>(failures));
        failures.values().stream().filter(t -> t != first).forEach(this::addSuppressed);
    }

    /** Each failed rank's exception, by world rank. */
    public Map<Integer, Throwable> failures() {
        return failures;
    }

    private static String message(int worldSize, Map<Integer, Throwable> failures) {
        StringBuilder sb = new StringBuilder()
                .append(failures.size()).append(" of ").append(worldSize)
                .append(worldSize == 1 ? " rank failed" : " ranks failed");
        failures.forEach((rank, t) -> sb.append("\n  rank ").append(rank).append(": ").append(WorldMonitor.summary(t)));
        return sb.toString();
    }
}
