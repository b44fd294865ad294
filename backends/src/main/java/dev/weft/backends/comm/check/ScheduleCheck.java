package dev.weft.backends.comm.check;

import dev.weft.backends.comm.Communicator;
import dev.weft.graph.Graph;
import dev.weft.spi.CommHandle;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Checks that the ranks of a communicator agree on how they communicate, before they do (see {@link CheckMode}).
 *
 * <p>A compiled program is checked once per rank, when it is compiled (just before its first run), so its runs
 * pay nothing: on each communicator it uses, its ranks allgather their {@link Fingerprint} rows ({@code 1 + 2 *
 * size} longs) on the communicator's private duplicate. Only when the rows disagree do they allgather their full
 * schedules and raise, all of them, a {@link ScheduleMismatchException} naming the first {@link Divergence}.
 *
 * <p>A rank takes part for each communicator its program communicates on or whose rank or size it read while
 * traced (a rank-specialised program may leave a rank nothing to send); a program that does neither is never
 * checked, so a rank-local helper called on some ranks only costs nothing. Every rank of the communicator must
 * compile its programs that use it in the same order (as it runs them), and a program recompiled after the
 * compile cache evicted it is checked again, so ranks must evict alike (they do when they make the same calls;
 * fake ranks share one cache).
 *
 * <p>Cost, measured on a loaded 2-core machine for 100 allreduces and 50 sendrecvs: 2.6 ms per check on 4 fake
 * ranks, 7-12 ms under {@code mpirun -np 2}, within the noise of a first call of 170-600 ms; none after it.
 * {@code strict}: one small allgather more per eager collective.
 */
public final class ScheduleCheck {
    private static final LongAdder EXCHANGES = new LongAdder();

    private ScheduleCheck() {
    }

    /** How many fingerprint exchanges this process has run (compiled and eager), for tests and measurements. */
    public static long exchanges() {
        return EXCHANGES.sum();
    }

    /**
     * Checks {@code graph}'s schedule, unless {@link CheckMode} is {@code off}, on each communicator of more than
     * one rank that it communicates on or whose rank or size it read, in order of name (the same on every rank).
     */
    public static void beforeFirstRun(Graph graph) {
        if (CheckMode.current() == CheckMode.OFF) {
            return;
        }
        Map<Communicator, List<ScheduleItem>> schedules = ScheduleExtractor.of(graph.body());
        List<Communicator> comms = new ArrayList<>(schedules.keySet());
        for (CommHandle h : graph.commsRead()) {
            if (h instanceof Communicator c && !schedules.containsKey(c)) {
                comms.add(c);
            }
        }
        comms.sort(Comparator.comparing(Communicator::name));
        for (Communicator comm : comms) {
            if (comm.size() < 2) {
                continue;
            }
            List<ScheduleItem> items = schedules.getOrDefault(comm, List.of());
            CheckChannel channel = CheckChannel.of(comm);
            synchronized (channel) {
                exchange(channel, items, Fingerprint.row(items, comm.size()));
            }
        }
    }

    /**
     * Checks, in {@code strict} mode, that every rank of {@code comm} runs the same eager collective as
     * {@code step}; one extra small allgather per call.
     */
    public static void beforeEager(Communicator comm, CommStep step) {
        if (!step.isCollective() || comm.size() < 2 || CheckMode.current() != CheckMode.STRICT) {
            return;
        }
        List<ScheduleItem> items = List.of(step);
        CheckChannel channel = CheckChannel.of(comm);
        synchronized (channel) {
            exchange(channel, items, Fingerprint.row(items, comm.size()));
        }
    }

    private static void exchange(CheckChannel channel, List<ScheduleItem> items, long[] row) {
        SourceLocation where = firstLocation(items);
        long[][] rows = channel.allgather(row, where);
        EXCHANGES.increment();
        if (Fingerprint.agree(rows)) {
            return;
        }
        byte[] mine = ScheduleCodec.encode(items);
        long[][] lengths = channel.allgather(new long[] {mine.length}, where);
        long longest = Arrays.stream(lengths).mapToLong(l -> l[0]).max().orElse(0);
        long[] words = new long[(int) ((longest + Long.BYTES - 1) / Long.BYTES)];
        MemorySegment.ofArray(words).copyFrom(MemorySegment.ofArray(mine));
        long[][] all = channel.allgather(words, where);
        List<List<ScheduleItem>> schedules = new ArrayList<>();
        for (int r = 0; r < all.length; r++) {
            byte[] bytes = MemorySegment.ofArray(all[r]).asSlice(0, lengths[r][0]).toArray(ValueLayout.JAVA_BYTE);
            schedules.add(ScheduleCodec.decode(bytes));
        }
        Divergence d = Divergence.find(channel.comm().name(), schedules, rows);
        SourceLocation at = d.where().getOrDefault(channel.comm().rank(),
                d.where().values().stream().findFirst().orElse(where));
        throw new ScheduleMismatchException(at, d.message());
    }

    private static SourceLocation firstLocation(List<ScheduleItem> items) {
        for (ScheduleItem item : items) {
            SourceLocation w = switch (item) {
                case CommStep s -> s.where();
                case Repeat r -> firstLocation(r.body());
                case Branch b -> b.where();
            };
            if (!w.isUnknown()) {
                return w;
            }
        }
        return SourceLocation.UNKNOWN;
    }
}
