package dev.weft.spi;

import dev.weft.WeftException;
import dev.weft.comm.Comm;
import java.util.ServiceLoader;
import java.util.SortedMap;

/**
 * Runs code on N ranks of an in-process communicator (the fake runtime: one thread per rank, MPI's matching rules,
 * a report instead of a hang when every rank is blocked), with {@code Comm.world()} bound to each thread's rank.
 * The runtime ({@code dev.weft:weft}) provides it through {@link ServiceLoader}; test support such as
 * {@code dev.weft.testing.Ranks} finds it with {@link #load()}.
 */
public interface InProcessRanks {
    /** The code one rank runs, given that rank's world. */
    @FunctionalInterface
    interface Body {
        void run(Comm world) throws Throwable;
    }

    /**
     * What failed in a run: each failed rank's exception by rank, and the one that failed first (usually the cause
     * of the others, which then fail with errors naming it).
     */
    record Failures(SortedMap<Integer, Throwable> byRank, Throwable first) {
        /** True when every rank finished normally. */
        public boolean none() {
            return byRank.isEmpty();
        }
    }

    /**
     * Runs {@code body} once per rank on {@code n} ranks, each on its own thread, and returns when every rank has
     * finished (or the runtime's watchdog has ended the run). The exceptions are those the bodies threw, checked
     * ones included, or the runtime's for a rank it had to fail (a deadlock, a watchdog expiry).
     */
    Failures run(int n, Body body);

    /** The runtime's implementation. */
    static InProcessRanks load() {
        return ServiceLoader.load(InProcessRanks.class).findFirst().orElseThrow(() -> new WeftException(
                SourceLocation.capture(), "no Weft runtime on the class path to run ranks in process:"
                        + " add the dependency dev.weft:weft"));
    }
}
