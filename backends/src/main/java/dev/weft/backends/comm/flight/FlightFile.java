package dev.weft.backends.comm.flight;

import dev.weft.backends.json.JsonFile;
import dev.weft.backends.json.JsonParser;
import dev.weft.backends.json.JsonText;
import dev.weft.prim.CommOp;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.SourceLocation;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A dump as a file, {@code flight-rank<N>.jsonl}: JSON lines, first the dump's header
 * ({@code {"weft_flight":1,"rank":0,"size":2,"reason":"timeout","time":...}}), then one line per operation,
 * oldest first, with the fields of {@link FlightCall} and {@link FlightEntry} (strings, whole numbers, null).
 */
public final class FlightFile {
    /** The format's version, in each header. */
    private static final long VERSION = 1;
    /** The most ranks a header may claim, so that a damaged one cannot make a reader count billions of ranks. */
    private static final int MAX_SIZE = 1 << 24;

    private FlightFile() {
    }

    /** The name of rank {@code rank}'s file. */
    public static String name(int rank) {
        return "flight-rank" + rank + ".jsonl";
    }

    /**
     * Writes {@code dump} to {@code dir} (created if needed), replacing the rank's previous file at once.
     *
     * @throws IOException naming the file and why, if it cannot be written
     */
    public static Path write(OutputDirectory dir, FlightDump dump) throws IOException {
        StringBuilder sb = new StringBuilder();
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("weft_flight", VERSION);
        header.put("rank", dump.rank());
        header.put("size", dump.size());
        header.put("reason", dump.reason());
        header.put("time", dump.time());
        JsonText.write(header, sb);
        sb.append('\n');
        for (FlightEntry e : dump.entries()) {
            JsonText.write(fields(e), sb);
            sb.append('\n');
        }
        return dir.write(name(dump.rank()), out -> out.append(sb));
    }

    /**
     * Reads a file {@link #write} wrote.
     *
     * @throws IOException if it cannot be read or is not a flight file (the message names the line)
     */
    public static FlightDump read(Path file) throws IOException {
        List<String> lines = JsonFile.text(file).lines().toList();
        int n = 0;
        try {
            if (lines.isEmpty()) {
                throw new IllegalArgumentException("the file is empty");
            }
            Map<?, ?> h = object(lines.get(n++));
            if (!Double.valueOf(VERSION).equals(h.get("weft_flight"))) {
                throw new IllegalArgumentException("not a weft flight file (version " + VERSION + ")");
            }
            List<FlightEntry> entries = new ArrayList<>();
            while (n < lines.size()) {
                String line = lines.get(n++);
                if (!line.isBlank()) {
                    entries.add(entry(object(line)));
                }
            }
            int size = integer(h, "size");
            int rank = integer(h, "rank");
            if (size < 1 || size > MAX_SIZE || rank < 0 || rank >= size) {
                n = 1;
                throw new IllegalArgumentException("rank " + rank + " of " + size + " is not a rank of a job of at"
                        + " most " + MAX_SIZE + " ranks");
            }
            return new FlightDump(rank, size, text(h, "reason"), number(h, "time"), entries);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IOException(file + ":" + n + ": " + e.getMessage(), e);
        }
    }

    private static Map<String, Object> fields(FlightEntry e) {
        FlightCall c = e.call();
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("seq", e.seq());
        f.put("op", c.op().label());
        f.put("comm", c.comm());
        f.put("comm_rank", c.rank());
        f.put("comm_size", c.size());
        f.put("peer", c.peer());
        f.put("tag", c.tag());
        f.put("peer2", c.peer2());
        f.put("tag2", c.tag2());
        f.put("dtype", c.dtype());
        f.put("count", c.count());
        f.put("reduce", c.reduce());
        f.put("class", c.where().className());
        f.put("method", c.where().method());
        f.put("file", c.where().file());
        f.put("line", c.where().line());
        f.put("collective", e.collective());
        f.put("posted", e.posted());
        f.put("state", e.state().label());
        f.put("start", e.startMillis());
        f.put("end", e.endMillis());
        return f;
    }

    private static FlightEntry entry(Map<?, ?> f) {
        SourceLocation where = new SourceLocation(text(f, "class"), text(f, "method"), text(f, "file"),
                integer(f, "line"));
        FlightCall c = new FlightCall(kind(text(f, "op")), text(f, "comm"), integer(f, "comm_rank"),
                integer(f, "comm_size"), integer(f, "peer"), integer(f, "tag"), integer(f, "peer2"),
                integer(f, "tag2"), textOrNull(f, "dtype"), number(f, "count"), textOrNull(f, "reduce"), where);
        return new FlightEntry(number(f, "seq"), c, number(f, "collective"), number(f, "posted"),
                state(text(f, "state")), number(f, "start"), number(f, "end"));
    }

    /** One line's object, fields by name. */
    private static Map<?, ?> object(String line) {
        if (!(JsonParser.parse(line) instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("a line must be one JSON object");
        }
        return m;
    }

    private static String text(Map<?, ?> f, String key) {
        Object v = f.get(key);
        if (!(v instanceof String s)) {
            throw new IllegalArgumentException("field \"" + key + "\" must be a string");
        }
        return s;
    }

    /**
     * The kind labelled {@code label} ({@link CommOp.Kind#label}): the labels are the flight file's names of the
     * operations, those of earlier versions' files included ({@code private_dup}).
     */
    private static CommOp.Kind kind(String label) {
        try {
            return CommOp.Kind.of(label);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown operation \"" + label + "\"", e);
        }
    }

    /** The state labelled {@code label} ({@link FlightState#label}). */
    private static FlightState state(String label) {
        for (FlightState e : FlightState.values()) {
            if (e.label().equals(label)) {
                return e;
            }
        }
        throw new IllegalArgumentException("unknown state \"" + label + "\"");
    }

    private static String textOrNull(Map<?, ?> f, String key) {
        return f.get(key) == null ? null : text(f, key);
    }

    /** A whole number; every one a flight file holds (counts, sequence numbers, milliseconds) is under 2^53. */
    private static long number(Map<?, ?> f, String key) {
        Object v = f.get(key);
        if (!(v instanceof Double d) || d != Math.rint(d)) {
            throw new IllegalArgumentException("field \"" + key + "\" must be a whole number");
        }
        return d.longValue();
    }

    private static int integer(Map<?, ?> f, String key) {
        return Math.toIntExact(number(f, key));
    }
}
