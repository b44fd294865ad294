package dev.weft.backends.comm.check;

import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The first place where the full schedules of the ranks of a communicator disagree, found after their
 * {@link Fingerprint}s did: first the sequence of collectives, then, pair by pair of ranks whose fingerprints
 * differ, the messages of each tag in order.
 *
 * @param message what each rank reports, naming every rank's operation and source line
 * @param where   the source line of each rank's operation at the divergence (absent: the rank had none)
 */
record Divergence(String message, Map<Integer, SourceLocation> where) {

    /** The divergence of {@code schedules} (one per rank) on {@code comm}, whose rows are {@code rows}. */
    static Divergence find(String comm, List<List<ScheduleItem>> schedules, long[][] rows) {
        Divergence d = collectives(comm, schedules);
        if (d != null) {
            return d;
        }
        int size = schedules.size();
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                long sends = rows[i][1 + j];
                long receives = rows[j][1 + size + i];
                if (sends != Fingerprint.UNCHECKED && receives != Fingerprint.UNCHECKED && sends != receives) {
                    d = messages(comm, schedules, i, j);
                    if (d != null) {
                        return d;
                    }
                }
            }
        }
        return new Divergence("schedule mismatch on " + comm + ": the ranks' communication schedules differ"
                + " (their fingerprints disagree, but no single differing operation was found)", Map.of());
    }

    private static Divergence collectives(String comm, List<List<ScheduleItem>> schedules) {
        List<Unrolled> cursors = schedules.stream().map(Unrolled::collectives).toList();
        for (long k = 0; ; k++) {
            List<ScheduleItem> at = new ArrayList<>();
            boolean allEnded = true;
            boolean differ = false;
            for (Unrolled c : cursors) {
                ScheduleItem e = c.next();
                allEnded &= e == null;
                if (!at.isEmpty() && !same(at.getFirst(), e, true)) {
                    differ = true;
                }
                at.add(e);
            }
            if (allEnded) {
                return null;
            }
            if (differ) {
                StringBuilder b = new StringBuilder("schedule mismatch on " + comm + " at collective #" + k + ":");
                Map<Integer, SourceLocation> where = new TreeMap<>();
                for (int r = 0; r < at.size(); r++) {
                    b.append(r == 0 ? " " : "; ").append("rank ").append(r).append(' ')
                            .append(describe(at.get(r), "no collective (its schedule ends here)"));
                    SourceLocation w = location(at.get(r));
                    if (w != null) {
                        where.put(r, w);
                    }
                }
                return new Divergence(b.toString(), where);
            }
        }
    }

    /** The first differing message from rank {@code i} to rank {@code j}, by tag. */
    private static Divergence messages(String comm, List<List<ScheduleItem>> schedules, int i, int j) {
        TreeSet<Integer> tags = new TreeSet<>();
        tagsOf(schedules.get(i), new Channel(false, j, 0), tags);
        tagsOf(schedules.get(j), new Channel(true, i, 0), tags);
        for (int tag : tags) {
            Unrolled sends = Unrolled.channel(schedules.get(i), new Channel(false, j, tag));
            Unrolled receives = Unrolled.channel(schedules.get(j), new Channel(true, i, tag));
            for (long k = 0; ; k++) {
                ScheduleItem s = sends.next();
                ScheduleItem r = receives.next();
                if (s == null && r == null) {
                    break;
                }
                if (!same(s, r, false)) {
                    String which = "message #" + k + " from rank " + i + " to rank " + j + " with tag " + tag;
                    Map<Integer, SourceLocation> where = new TreeMap<>();
                    if (r != null) {
                        where.put(j, location(r));
                    }
                    if (s != null) {
                        where.put(i, location(s));
                    }
                    return new Divergence("schedule mismatch on " + comm + " at " + which + ": rank " + i + " "
                            + describe(s, "sends none") + "; rank " + j + " "
                            + describe(r, "receives none"), where);
                }
            }
        }
        return null;
    }

    private static void tagsOf(List<ScheduleItem> items, Channel side, TreeSet<Integer> tags) {
        for (ScheduleItem item : items) {
            switch (item) {
                case CommStep s -> {
                    if (!s.isCollective() && s.receives() == side.receives() && s.peer() == side.peer()) {
                        tags.add(s.tag());
                    }
                }
                case Repeat r -> tagsOf(r.body(), side, tags);
                case Branch b -> {
                }
            }
        }
    }

    private static boolean same(ScheduleItem a, ScheduleItem b, boolean collective) {
        if (a == null || b == null) {
            return a == b;
        }
        return Unrolled.key(a, collective) == Unrolled.key(b, collective);
    }

    private static String describe(ScheduleItem e, String none) {
        return switch (e) {
            case null -> none;
            case CommStep s -> s.describeAt();
            case Branch b -> "a Weft.cond whose branches run different collectives at " + b.where();
            case Repeat r -> throw new IllegalArgumentException("a loop is never an element");
        };
    }

    private static SourceLocation location(ScheduleItem e) {
        return switch (e) {
            case null -> null;
            case CommStep s -> s.where();
            case Branch b -> b.where();
            case Repeat r -> null;
        };
    }
}
