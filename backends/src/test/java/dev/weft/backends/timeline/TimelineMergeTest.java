package dev.weft.backends.timeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimelineMergeTest {
    private static String rankFile(int rank, String cat, double ts, double dur, long dropped) {
        return "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + rank + ",\"tid\":0,"
                + "\"args\":{\"name\":\"rank " + rank + "\"}},{\"name\":\"op\",\"cat\":\"" + cat + "\",\"ph\":\"X\","
                + "\"ts\":" + ts + ",\"dur\":" + dur + ",\"pid\":" + rank + ",\"tid\":7,\"args\":{}}],"
                + "\"otherData\":{\"dropped\":" + dropped + "}}";
    }

    @Test
    void mergesRanksFromTheEarliestEvent(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("timeline-rank1.json"), rankFile(1, "comm", 1001.5, 3, 5));
        Files.writeString(dir.resolve("timeline-rank0.json"), rankFile(0, "kernel", 1000.5, 2, 0));
        Files.writeString(dir.resolve("notes.txt"), "not a rank file");
        TimelineMerge m = TimelineMerge.read(dir);
        assertThat(m.ranks()).containsExactly(0, 1);
        assertThat(m.boxes()).containsExactly(new TimelineBox(0, "kernel", "op", 0, 2),
                new TimelineBox(1, "comm", "op", 1, 3));
        assertThat(m.dropped()).isEqualTo(5);
        StringWriter json = new StringWriter();
        m.writeTo(json);
        assertThat(json.toString())
                .contains("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"rank 1\"}}")
                .contains("\"ts\":1,\"dur\":3,\"pid\":1");
        assertThat(GanttSvg.render(m, "t")).contains("2 ranks, 2 events, 5 dropped past the cap")
                .contains("data-rank=\"0\"", "data-rank=\"1\"").contains("0 µs", "4 µs");
    }

    @Test
    void namesTheFileThatIsNotJson(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("timeline-rank0.json"), "{\"traceEvents\":[");
        assertThatThrownBy(() -> TimelineMerge.read(dir)).isInstanceOf(IOException.class)
                .hasMessage(dir.resolve("timeline-rank0.json") + ": bad JSON at line 1, column 17: end of text where a"
                        + " value was expected");
    }

    @Test
    void namesTheFileThatIsBinaryOrNestedTooDeeply(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("timeline-rank0.json");
        Files.write(file, new byte[] {'{', '\n', (byte) 0xc3, '('});
        assertThatThrownBy(() -> TimelineMerge.read(dir)).isInstanceOf(IOException.class)
                .hasMessage(file + " is not UTF-8 text (byte offset 2)");
        Files.writeString(file, "{\"traceEvents\":\n" + "[".repeat(100_000));
        assertThatThrownBy(() -> TimelineMerge.read(dir)).isInstanceOf(IOException.class)
                .hasMessage(file + ": bad JSON at line 2, column 512: arrays and objects nested deeper than 512");
        Files.writeString(file, "{\"traceEvents\":[1]}");
        assertThatThrownBy(() -> TimelineMerge.read(dir)).isInstanceOf(IOException.class)
                .hasMessage(file + ": an element of traceEvents is not an object");
    }

    @Test
    void saysWhenThereIsNothingToMerge(@TempDir Path dir) {
        assertThatThrownBy(() -> TimelineMerge.read(dir)).isInstanceOf(IOException.class)
                .hasMessageContaining("no timeline-rank<N>.json files in " + dir);
    }
}
