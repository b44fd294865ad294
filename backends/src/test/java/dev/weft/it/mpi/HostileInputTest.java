package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.backends.cli.Doctor;
import dev.weft.backends.cli.MergeTimeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code bin/weft doctor} and {@code bin/weft timeline} on files that are not what they should be, in a JVM of
 * their own: each says in one line which file is wrong and why, with no stack trace, and exits non-zero.
 */
class HostileInputTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final String HEADER = "{\"weft_flight\":1,\"rank\":0,\"size\":2,\"reason\":\"end\",\"time\":5}\n";
    private static final String ENTRY = "{\"seq\":1,\"op\":\"barrier\",\"comm\":\"world\",\"comm_rank\":0,"
            + "\"comm_size\":2,\"peer\":-1,\"tag\":-1,\"peer2\":-1,\"tag2\":-1,\"dtype\":null,\"count\":0,"
            + "\"reduce\":null,\"class\":\"A\",\"method\":\"m\",\"file\":\"A.java\",\"line\":3,\"collective\":1,"
            + "\"posted\":-1,\"state\":\"started\",\"start\":1,\"end\":-1}\n";

    static Stream<Arguments> brokenFlightFiles() {
        return Stream.of(
                Arguments.of("[".repeat(100_000).getBytes(), ":1: bad JSON at line 1, column 513: arrays and objects"
                        + " nested deeper than 512"),
                Arguments.of(new byte[] {0x7f, 'E', 'L', 'F', (byte) 0x80, 0}, " is not UTF-8 text (byte offset 4)"),
                Arguments.of((HEADER + ENTRY.replace("\"dtype\":null", "\"dtype\":7")).getBytes(),
                        ":2: field \"dtype\" must be a string"),
                Arguments.of((HEADER + ENTRY.replace("barrier", "teleport")).getBytes(),
                        ":2: unknown operation \"teleport\""),
                Arguments.of(HEADER.replace("\"size\":2", "\"size\":2000000000").getBytes(),
                        ":1: rank 0 of 2000000000 is not a rank of a job of at most 16777216 ranks"));
    }

    @ParameterizedTest
    @MethodSource("brokenFlightFiles")
    void theDoctorNamesTheBrokenFile(byte[] content, String why, @TempDir Path dir) throws Exception {
        Path file = Files.write(dir.resolve("flight-rank0.jsonl"), content);
        Mpirun.Result r = Mpirun.plain(LIMIT, Doctor.class, dir.toString());
        assertThat(r.output()).as(r.output()).contains("weft doctor: " + file + why).doesNotContain("\tat ");
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
    }

    @Test
    void aGoodFileReadsWell(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("flight-rank0.jsonl"), HEADER + ENTRY);
        Mpirun.Result r = Mpirun.plain(LIMIT, Doctor.class, dir.toString());
        assertThat(r.output()).as(r.output()).contains("1 of 2 ranks dumped their flight recorder (no file for rank 1)",
                "rank 0 (end): in barrier on 'world' (collective #1) at A.java:3");
        assertThat(r.exitCode()).as(r.output()).isZero();
    }

    @Test
    void theTimelineMergeNamesTheBrokenFile(@TempDir Path dir) throws Exception {
        Path file = Files.write(dir.resolve("timeline-rank0.json"), new byte[] {'{', (byte) 0xfe});
        Mpirun.Result r = Mpirun.plain(LIMIT, MergeTimeline.class, dir.toString());
        assertThat(r.output()).as(r.output())
                .contains("weft timeline: " + file + " is not UTF-8 text (byte offset 1)").doesNotContain("\tat ");
        assertThat(r.exitCode()).as(r.output()).isEqualTo(2);
        Files.writeString(file, "{\"traceEvents\":" + "[".repeat(100_000));
        r = Mpirun.plain(LIMIT, MergeTimeline.class, dir.toString());
        assertThat(r.output()).as(r.output()).contains("weft timeline: " + file + ": bad JSON at line 1, column 527:"
                + " arrays and objects nested deeper than 512").doesNotContain("\tat ", "StackOverflowError");
        assertThat(r.exitCode()).as(r.output()).isEqualTo(2);
    }

    @Test
    void theMergedFilesReplaceLinksInsteadOfFollowingThem(@TempDir Path dir) throws Exception {
        Path out = Files.createDirectory(dir.resolve("tl"));
        Files.writeString(out.resolve("timeline-rank0.json"), "{\"traceEvents\":[{\"name\":\"op\",\"cat\":\"comm\","
                + "\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":0,\"tid\":1,\"args\":{}}]}");
        Path target = Files.writeString(dir.resolve("precious"), "keep");
        Files.createSymbolicLink(out.resolve("timeline.json"), target);
        Files.createSymbolicLink(out.resolve("timeline.svg"), target);
        MergeTimeline.main(new String[] {out.toString()});
        assertThat(Files.readString(target)).isEqualTo("keep");
        assertThat(out.resolve("timeline.json")).isRegularFile().content().contains("\"name\":\"rank 0\"");
        assertThat(Files.isSymbolicLink(out.resolve("timeline.svg"))).isFalse();
        assertThat(out.resolve("timeline.svg")).content().contains("<svg");
    }
}
