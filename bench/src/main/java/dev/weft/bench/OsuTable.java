package dev.weft.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * {@code bin/weft bench osu}'s rows as Markdown: a line counting, per routine and MPI, the sizes where Weft is within
 * {@link #TARGET} times C, then one table per routine and MPI (size, C µs, Weft µs in a compiled loop and per compiled
 * call, each with its ratio Weft / C, and the first calls), each followed by whether the results agree and why a
 * series is missing.
 */
public final class OsuTable {
    /** The ratio Weft / C the sweep aims to stay within, warm, at every size; ratios above it are shown bold. */
    public static final double TARGET = 1.1;

    private OsuTable() {
    }

    public static String render(List<OsuRow> rows) {
        Map<String, List<OsuRow>> byRoutine = new LinkedHashMap<>();
        rows.forEach(r -> byRoutine.computeIfAbsent(r.routine() + " (" + r.mpi() + ")", k -> new ArrayList<>())
                .add(r));
        StringBuilder s = new StringBuilder();
        s.append("Sizes within ").append(TARGET).append("× C, warm, of those compared: in a compiled loop: ")
                .append(within(byRoutine, true)).append("; per compiled call: ").append(within(byRoutine, false))
                .append(".\n");
        byRoutine.forEach((routine, list) -> {
            s.append("\n#### ").append(routine).append("\n\n");
            s.append("| size | C µs | Weft fori µs | fori / C | Weft call µs | call / C | first call: Weft, C |\n");
            s.append("|---:|---:|---:|---:|---:|---:|---|\n");
            List<String> notes = new ArrayList<>();
            for (OsuRow r : list) {
                s.append("| ").append(size(r.bytes()))
                        .append(" | ").append(micros(r.c()))
                        .append(" | ").append(micros(r.fori()))
                        .append(" | ").append(ratio(r.foriRatio()))
                        .append(" | ").append(micros(r.call()))
                        .append(" | ").append(ratio(r.callRatio()))
                        .append(" | ").append(first(r.first())).append(", ").append(first(r.cFirst()))
                        .append(" |\n");
                notes.addAll(r.mismatches());
                missing("C", r.c(), notes);
                missing("Weft fori", r.fori(), notes);
                missing("Weft call", r.call(), notes);
                r.noRatio().ifPresent(notes::add);
            }
            boolean checked = list.stream().allMatch(r -> r.mismatches().isEmpty());
            s.append('\n').append(checked ? "Results agree (the sums of every rank's result, at every size)."
                    : "Results disagree.");
            notes.stream().distinct().forEach(n -> s.append(' ').append(n).append('.'));
            s.append('\n');
        });
        return s.toString();
    }

    /** {@code bytes} as 8 B, 2 KiB, 8 MiB. */
    public static String size(long bytes) {
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    /** Per routine, how many of its compared sizes have a ratio within {@link #TARGET}: {@code allreduce 4/11}. */
    private static String within(Map<String, List<OsuRow>> byRoutine, boolean fori) {
        List<String> out = new ArrayList<>();
        byRoutine.forEach((routine, list) -> {
            List<OptionalDouble> ratios = list.stream().map(r -> fori ? r.foriRatio() : r.callRatio())
                    .filter(OptionalDouble::isPresent).toList();
            long ok = ratios.stream().filter(q -> q.getAsDouble() <= TARGET).count();
            out.add(routine + " " + ok + "/" + ratios.size());
        });
        return String.join(", ", out);
    }

    /** The median in µs with the range of the samples: {@code 1.23 (1.20–1.40)}. */
    private static String micros(Outcome o) {
        if (!(o instanceof Measurement m)) {
            return "—";
        }
        return sig3(m.median() * 1e6) + " (" + sig3(m.min() * 1e6) + "–" + sig3(m.max() * 1e6) + ")";
    }

    private static String ratio(OptionalDouble q) {
        if (q.isEmpty()) {
            return "n/a";
        }
        String text = String.format(Locale.ROOT, "%.2f", q.getAsDouble());
        return q.getAsDouble() > TARGET ? "**" + text + "**" : text;
    }

    private static String first(Outcome o) {
        return o instanceof Measurement m ? Unit.TIME.format(m.median()) : "—";
    }

    private static void missing(String who, Outcome o, List<String> into) {
        if (o instanceof Outcome.Missing(String reason)) {
            into.add(who + " not measured: " + reason);
        }
    }

    private static String sig3(double v) {
        double a = Math.abs(v);
        String pattern = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, pattern, v);
    }
}
