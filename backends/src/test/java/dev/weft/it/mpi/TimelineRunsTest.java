package dev.weft.it.mpi;

import dev.weft.backends.json.JsonParser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.backends.cli.MergeTimeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code WEFT_TIMELINE} as a user runs it, in a JVM of its own (the setting is read once, at start-up): each rank
 * of {@link TimelineProgram} writes its trace-event file, and {@code bin/weft timeline}'s main merges them and
 * draws one lane per rank.
 */
class TimelineRunsTest {
    private static final Duration LIMIT = Duration.ofSeconds(120);

    @Test
    void fakeRanksWriteOneFileEachThatMergeIntoOneChart(@TempDir Path dir) throws Exception {
        Mpirun.Result r = Mpirun.plain(LIMIT, TimelineProgram.class, dir.toString(), "2");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("rank 0 ok", "rank 1 ok");
        for (int rank = 0; rank < 2; rank++) {
            List<Map<String, Object>> events = completeEvents(dir.resolve("timeline-rank" + rank + ".json"));
            final int pid = rank;
            assertThat(events).allSatisfy(e -> assertThat(e.get("pid")).isEqualTo((double) pid));
            assertThat(events).filteredOn(e -> e.get("cat").equals("call"))
                    .extracting(e -> e.get("name")).containsExactly("TimelineProgram.step", "TimelineProgram.step");
            assertThat(events).filteredOn(e -> e.get("cat").equals("kernel"))
                    .extracting(e -> e.get("name")).contains("fusion");
            List<Map<String, Object>> comms = events.stream().filter(e -> e.get("cat").equals("comm"))
                    .map(e -> object(e.get("args"))).toList();
            assertThat(comms).hasSize(3).allSatisfy(a -> {
                assertThat(a.get("op")).isEqualTo("allreduce");
                assertThat(a.get("communicator")).isEqualTo("world");
                assertThat(a.get("dtype")).isEqualTo("f32");
                assertThat(a.get("bytes")).isEqualTo(16.0);
                assertThat((String) a.get("line")).startsWith("TimelineProgram.java:");
            });
            assertThat(comms).extracting(a -> a.get("compiled")).containsExactly("yes", "yes", "no");
            assertThat(events).allSatisfy(e -> assertThat((Double) e.get("dur")).isNotNegative());
        }

        MergeTimeline.main(new String[] {dir.toString()});
        List<Map<String, Object>> all = events(dir.resolve("timeline.json"));
        assertThat(all.stream().map(e -> e.get("pid")).collect(Collectors.toSet())).isEqualTo(Set.of(0.0, 1.0));
        assertThat(all).filteredOn(e -> e.get("name").equals("process_name"))
                .extracting(e -> object(e.get("args")).get("name")).containsExactly("rank 0", "rank 1");
        assertThat(all).filteredOn(e -> "X".equals(e.get("ph"))).hasSize(
                completeEvents(dir.resolve("timeline-rank0.json")).size()
                        + completeEvents(dir.resolve("timeline-rank1.json")).size());

        NodeList groups = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(dir.resolve("timeline.svg").toFile()).getElementsByTagName("g");
        int lanes = 0;
        for (int i = 0; i < groups.getLength(); i++) {
            Element g = (Element) groups.item(i);
            if (g.getAttribute("class").equals("lane")) {
                assertThat(g.getAttribute("data-rank")).isEqualTo(Integer.toString(lanes));
                assertThat(g.getElementsByTagName("rect").getLength()).isGreaterThan(3);
                lanes++;
            }
        }
        assertThat(lanes).isEqualTo(2);
    }

    @Test
    void aFakeRankThatTimesOutWritesWhatItRecorded(@TempDir Path dir) throws Exception {
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        flags.add("-Dweft.comm.timeout=1");
        Mpirun.Result r = Mpirun.plain(LIMIT, flags, Map.of(), TimelineProgram.class, dir.toString(), "2", "timeout");
        assertThat(r.output()).as("output:%n%s", r.output()).contains("past WEFT_COMM_TIMEOUT=1 s");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isEqualTo(1);
        for (int rank = 0; rank < 2; rank++) {
            assertThat(completeEvents(dir.resolve("timeline-rank" + rank + ".json")))
                    .filteredOn(e -> e.get("cat").equals("call")).hasSize(2);
        }
    }

    @Test
    void aTimelineThatCannotBeWrittenFailsTheRunNamingTheFile(@TempDir Path dir) throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "");
        Mpirun.Result r = Mpirun.plain(LIMIT, TimelineProgram.class, notADirectory.toString(), "2");
        assertThat(r.output()).as("output:%n%s", r.output()).contains("rank 0 ok", "rank 1 ok",
                "weft: the timeline was not written: " + notADirectory + " (chosen by weft.timeline) is not a directory");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isEqualTo(1);
    }

    @Test
    void anMpiRankThatCannotWriteItsTimelineOrFlightFileFailsTheJob(@TempDir Path dir) throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Path notADirectory = Files.writeString(dir.resolve("file"), "");
        Mpirun.Result r = Mpirun.run(2, LIMIT, Map.of("WEFT_FLIGHT_DIR", notADirectory.toString()),
                TimelineProgram.class, notADirectory.toString());
        assertThat(r.output()).as("mpirun output:%n%s", r.output()).contains("rank 0 ok", "rank 1 ok",
                "weft: the timeline was not written: " + notADirectory + " (chosen by weft.timeline) is not a directory",
                "weft: rank 1: its flight recorder was not written: " + notADirectory
                        + " (chosen by WEFT_FLIGHT_DIR) is not a directory");
        assertThat(r.exitCode()).as("mpirun output:%n%s", r.output()).isNotIn(0, -1);
    }

    @Test
    void eachMpiRankWritesItsFile(@TempDir Path dir) throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Mpirun.Result r = Mpirun.run(2, LIMIT, Map.of("WEFT_TIMELINE", dir.toString()), TimelineProgram.class,
                dir.toString());
        assertThat(r.exitCode()).as("mpirun output:%n%s", r.output()).isZero();
        for (int rank = 0; rank < 2; rank++) {
            List<Map<String, Object>> events = completeEvents(dir.resolve("timeline-rank" + rank + ".json"));
            assertThat(events).extracting(e -> e.get("cat")).contains("call", "kernel", "comm");
            assertThat(events).filteredOn(e -> e.get("cat").equals("comm")).hasSize(3);
        }
    }

    /** The complete events of one rank's file, which says it dropped none. */
    private static List<Map<String, Object>> completeEvents(Path file) throws Exception {
        assertThat(object(JsonParser.parse(Files.readString(file))).get("otherData")).asString()
                .contains("dropped=0.0");
        return events(file).stream().filter(e -> "X".equals(e.get("ph"))).toList();
    }

    private static List<Map<String, Object>> events(Path file) throws Exception {
        Object events = object(JsonParser.parse(Files.readString(file))).get("traceEvents");
        return ((List<?>) events).stream().map(TimelineRunsTest::object).toList();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object json) {
        return (Map<String, Object>) json;
    }
}
