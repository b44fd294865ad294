package dev.weft.backends.timeline;

import dev.weft.backends.json.JsonFile;
import dev.weft.backends.json.JsonText;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The ranks' timeline files of one directory ({@code timeline-rank<N>.json}) as one trace: every rank's events
 * under its own {@code pid} (the rank) named {@code rank N}, times moved so that the earliest event starts at 0
 * (the ranks' clocks are their hosts' wall clocks, so ranks on different hosts align only as well as those do).
 * Times pass through doubles, so they keep a quarter of a microsecond.
 */
public final class TimelineMerge {
    private static final Pattern RANK_FILE = Pattern.compile("timeline-rank(\\d{1,9})\\.json");

    private final List<Integer> ranks;
    private final List<Object> traceEvents;
    private final List<TimelineBox> boxes;
    private final long dropped;

    private TimelineMerge(List<Integer> ranks, List<Object> traceEvents, List<TimelineBox> boxes, long dropped) {
        this.ranks = ranks;
        this.traceEvents = traceEvents;
        this.boxes = boxes;
        this.dropped = dropped;
    }

    /**
     * Reads the rank files of {@code dir}.
     *
     * @throws IOException if there are none, or one cannot be read or is not a trace-event file (the message
     *                     starts with the file)
     */
    public static TimelineMerge read(Path dir) throws IOException {
        Map<Integer, Map<?, ?>> files = new LinkedHashMap<>();
        try (Stream<Path> listing = Files.list(dir)) {
            for (Path p : listing.sorted(Comparator.comparing(TimelineMerge::rankOf)).toList()) {
                if (rankOf(p) >= 0) {
                    Object json = JsonFile.parse(p);
                    if (!(json instanceof Map<?, ?> m && m.get("traceEvents") instanceof List<?> events)) {
                        throw new IOException(p + " has no traceEvents list");
                    }
                    if (!events.stream().allMatch(e -> e instanceof Map<?, ?>)) {
                        throw new IOException(p + ": an element of traceEvents is not an object");
                    }
                    files.put(rankOf(p), m);
                }
            }
        }
        if (files.isEmpty()) {
            throw new IOException("no timeline-rank<N>.json files in " + dir
                    + " (run the program with WEFT_TIMELINE=" + dir + " first)");
        }
        double origin = Double.MAX_VALUE;
        for (Map<?, ?> f : files.values()) {
            for (Object e : (List<?>) f.get("traceEvents")) {
                if (isComplete(e)) {
                    origin = Math.min(origin, number(e, "ts"));
                }
            }
        }
        List<Object> events = new ArrayList<>();
        List<TimelineBox> boxes = new ArrayList<>();
        long dropped = 0;
        for (Map.Entry<Integer, Map<?, ?>> f : files.entrySet()) {
            int rank = f.getKey();
            events.add(metadata("process_name", rank, Map.of("name", "rank " + rank)));
            events.add(metadata("process_sort_index", rank, Map.of("sort_index", (double) rank)));
            for (Object e : (List<?>) f.getValue().get("traceEvents")) {
                Map<String, Object> copy = new LinkedHashMap<>();
                ((Map<?, ?>) e).forEach((k, v) -> copy.put((String) k, v));
                if ("process_name".equals(copy.get("name")) && "M".equals(copy.get("ph"))) {
                    continue;
                }
                copy.put("pid", (double) rank);
                if (isComplete(e)) {
                    double start = number(e, "ts") - origin;
                    copy.put("ts", start);
                    boxes.add(new TimelineBox(rank, String.valueOf(copy.get("cat")), String.valueOf(copy.get("name")),
                            start, number(e, "dur")));
                }
                events.add(copy);
            }
            if (f.getValue().get("otherData") instanceof Map<?, ?> other && other.get("dropped") instanceof Double d) {
                dropped += d.longValue();
            }
        }
        return new TimelineMerge(List.copyOf(files.keySet()), events, boxes, dropped);
    }

    public List<Integer> ranks() {
        return ranks;
    }

    /** The complete events, by rank in file order. */
    public List<TimelineBox> boxes() {
        return boxes;
    }

    /** Events the ranks dropped past their cap. */
    public long dropped() {
        return dropped;
    }

    /** Writes the merged trace-event JSON to {@code out}. */
    public void writeTo(Writer out) throws IOException {
        StringBuilder text = new StringBuilder("{\"traceEvents\":[\n");
        for (int i = 0; i < traceEvents.size(); i++) {
            if (i > 0) {
                text.append(",\n");
            }
            JsonText.write(traceEvents.get(i), text);
        }
        text.append("\n],\"displayTimeUnit\":\"ns\",\"otherData\":")
                .append(new JsonObjectText().field("ranks", ranks.size()).field("events", boxes.size())
                        .field("dropped", dropped).toString())
                .append("}\n");
        out.append(text);
    }

    private static int rankOf(Path p) {
        Matcher m = RANK_FILE.matcher(p.getFileName().toString());
        return m.matches() ? Integer.parseInt(m.group(1)) : -1;
    }

    private static boolean isComplete(Object event) {
        return event instanceof Map<?, ?> m && "X".equals(m.get("ph")) && m.get("ts") instanceof Double
                && m.get("dur") instanceof Double;
    }

    private static double number(Object event, String key) {
        return (Double) ((Map<?, ?>) event).get(key);
    }

    private static Map<String, Object> metadata(String name, int rank, Map<String, Object> args) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("ph", "M");
        m.put("pid", (double) rank);
        m.put("tid", 0.0);
        m.put("args", args);
        return m;
    }
}
