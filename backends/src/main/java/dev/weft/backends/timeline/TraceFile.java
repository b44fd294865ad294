package dev.weft.backends.timeline;

import dev.weft.backends.json.JsonText;

import java.io.IOException;
import java.io.Writer;
import java.util.Map;

/**
 * One rank's timeline as Chrome trace-event JSON: {@code {"traceEvents": [...], "otherData": {...}}} with a
 * {@code process_name} ("rank N") and a {@code thread_name} metadata event, then one complete event
 * ({@code "ph":"X"}) per recorded event: {@code ts} in microseconds since the epoch, {@code dur} in microseconds
 * (both to the nanosecond), {@code pid} the rank, {@code tid} the thread, {@code cat} {@code call},
 * {@code kernel} or {@code comm}. {@code otherData} holds the rank, the events kept, the cap and how many were
 * dropped past it.
 */
final class TraceFile {
    private TraceFile() {
    }

    static String rankFileName(int rank) {
        return "timeline-rank" + rank + ".json";
    }

    /** Writes the events of {@code s} to {@code w}. */
    static void write(RankEvents.Snapshot s, Writer w) throws IOException {
        StringBuilder line = new StringBuilder("{\"traceEvents\":[\n");
        line.append(metadata("process_name", s.rank(), 0, "rank " + s.rank()));
        for (Map.Entry<Long, String> t : s.threadNames().entrySet()) {
            line.append(",\n").append(metadata("thread_name", s.rank(), t.getKey(), t.getValue()));
        }
        w.append(line);
        for (int i = 0; i < s.starts().length; i++) {
            line.setLength(0);
            EventSite site = s.sites()[i];
            line.append(",\n{\"name\":");
            JsonText.quote(site.name(), line);
            line.append(",\"cat\":\"").append(site.category()).append("\",\"ph\":\"X\",\"ts\":");
            micros(Timeline.epochNanos(s.starts()[i]), line);
            line.append(",\"dur\":");
            micros(s.durations()[i], line);
            line.append(",\"pid\":").append(s.rank()).append(",\"tid\":").append(s.threads()[i])
                    .append(",\"args\":").append(site.args()).append('}');
            w.append(line);
        }
        w.append("\n],\"displayTimeUnit\":\"ns\",\"otherData\":")
                .append(new JsonObjectText().field("rank", s.rank()).field("events", s.starts().length)
                        .field("cap", s.cap()).field("dropped", s.dropped()).toString())
                .append("}\n");
    }

    private static String metadata(String kind, int pid, long tid, String name) {
        StringBuilder b = new StringBuilder("{\"name\":\"").append(kind).append("\",\"ph\":\"M\",\"pid\":").append(pid)
                .append(",\"tid\":").append(tid).append(",\"args\":{\"name\":");
        JsonText.quote(name, b);
        return b.append("}}").toString();
    }

    /** Appends {@code nanos} as microseconds with three decimals. */
    private static void micros(long nanos, StringBuilder out) {
        out.append(nanos / 1000).append('.');
        long frac = nanos % 1000;
        if (frac < 100) {
            out.append('0');
        }
        if (frac < 10) {
            out.append('0');
        }
        out.append(frac);
    }
}
