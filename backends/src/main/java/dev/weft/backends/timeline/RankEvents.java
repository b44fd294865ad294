package dev.weft.backends.timeline;

import dev.weft.spi.Setting;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One rank's recorded events, at most {@link Setting#TIMELINE_EVENTS} of them (later ones are counted, not kept),
 * in columns so that an event costs about 40 bytes; thread-safe.
 */
final class RankEvents {
    private final int rank;
    private final int cap;
    private long[] starts = new long[1024];
    private long[] durations = new long[1024];
    private long[] threads = new long[1024];
    private EventSite[] sites = new EventSite[1024];
    private final Map<Long, String> threadNames = new LinkedHashMap<>();
    private int size;
    private long dropped;

    /** @throws dev.weft.WeftException if {@link Setting#TIMELINE_EVENTS} is set to a bad value */
    RankEvents(int rank) {
        this.rank = rank;
        this.cap = (int) Setting.TIMELINE_EVENTS.number();
    }

    int rank() {
        return rank;
    }

    synchronized void add(EventSite site, long start, long end, Thread thread) {
        if (size == cap) {
            dropped++;
            return;
        }
        if (size == starts.length) {
            int n = (int) Math.min(cap, 2L * size);
            starts = Arrays.copyOf(starts, n);
            durations = Arrays.copyOf(durations, n);
            threads = Arrays.copyOf(threads, n);
            sites = Arrays.copyOf(sites, n);
        }
        long tid = thread.threadId();
        starts[size] = start;
        durations[size] = end - start;
        threads[size] = tid;
        sites[size] = site;
        size++;
        if (!threadNames.containsKey(tid)) {
            threadNames.put(tid, thread.getName());
        }
    }

    /** The events kept so far, in recording order. */
    synchronized Snapshot snapshot() {
        return new Snapshot(rank, Arrays.copyOf(starts, size), Arrays.copyOf(durations, size),
                Arrays.copyOf(threads, size), Arrays.copyOf(sites, size), Map.copyOf(threadNames), cap, dropped);
    }

    /** A copy of the events: start times in {@link System#nanoTime} nanoseconds, durations in nanoseconds. */
    record Snapshot(int rank, long[] starts, long[] durations, long[] threads, EventSite[] sites,
                    Map<Long, String> threadNames, int cap, long dropped) {
    }
}
