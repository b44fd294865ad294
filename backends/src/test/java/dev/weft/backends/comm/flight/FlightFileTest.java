package dev.weft.backends.comm.flight;

import dev.weft.prim.CommOp;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.SourceLocation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FlightFileTest {
    @Test
    void aDumpReadsBackAsWritten(@TempDir Path dir) throws IOException {
        SourceLocation odd = new SourceLocation("p.Odd\"Name", "m\\x", "Odd \"q\"\t.java", 12);
        List<FlightEntry> entries = List.of(
                new FlightEntry(7, new FlightCall(CommOp.Kind.SENDRECV, "world.split(1)#0", 1, 3, 2, 5, 0, 6, "f64", 10,
                        null, odd), -1, -1, FlightState.STARTED, 1_700_000_000_123L, -1),
                new FlightEntry(8, new FlightCall(CommOp.Kind.ALLREDUCE, "world", 1, 3, -1, -1, -1, -1, "f32", 4, "SUM",
                        SourceLocation.UNKNOWN), 3, -1, FlightState.COMPLETED, 1_700_000_000_200L,
                        1_700_000_000_210L));
        FlightDump dump = new FlightDump(1, 3, "timeout", 1_700_000_003_000L, entries);
        Path file = FlightFile.write(new OutputDirectory(dir, "WEFT_FLIGHT_DIR"), dump);
        assertThat(file.getFileName()).hasToString("flight-rank1.jsonl");
        assertThat(Files.readAllLines(file)).hasSize(3);
        assertThat(FlightFile.read(file)).isEqualTo(dump);
    }

    /** One operation's line as version 1 files have always written it. */
    private static String line(long seq, String op, int peer, String dtype, long count, String reduce) {
        return String.format("{\"seq\":%d,\"op\":\"%s\",\"comm\":\"world\",\"comm_rank\":0,\"comm_size\":2,"
                        + "\"peer\":%d,\"tag\":-1,\"peer2\":-1,\"tag2\":-1,\"dtype\":%s,\"count\":%d,\"reduce\":%s,"
                        + "\"class\":\"A\",\"method\":\"m\",\"file\":\"A.java\",\"line\":%d,\"collective\":-1,"
                        + "\"posted\":-1,\"state\":\"completed\",\"start\":5,\"end\":6}\n", seq, op, peer,
                dtype == null ? "null" : "\"" + dtype + "\"", count, reduce == null ? "null" : "\"" + reduce + "\"",
                seq);
    }

    @Test
    void theLabelsOfEarlierFilesReadAsTheSharedKinds(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("flight-rank0.jsonl");
        Files.writeString(file, "{\"weft_flight\":1,\"rank\":0,\"size\":2,\"reason\":\"end\",\"time\":5}\n"
                + line(1, "private_dup", -1, null, -1, null)
                + line(2, "allreduce", -1, "f32", 4, "SUM")
                + line(3, "reduce_scatter", -1, "f64", 2, "MAX")
                + line(4, "wait_irecv", 1, "i32", 3, null)
                + line(5, "bcast", 1, "i64", 1, null));
        List<FlightEntry> entries = FlightFile.read(file).entries();
        assertThat(entries).extracting(e -> e.call().op()).containsExactly(CommOp.Kind.PRIVATE_DUP,
                CommOp.Kind.ALLREDUCE, CommOp.Kind.REDUCE_SCATTER, CommOp.Kind.WAIT_IRECV, CommOp.Kind.BCAST);
        assertThat(entries).extracting(e -> e.call().args()).containsExactly("private_dup", "allreduce f32[4] SUM",
                "reduce_scatter f64[2] MAX", "wait_irecv i32[3] from 1 tag -1", "bcast i64[1] root 1");
        Files.writeString(file, "{\"weft_flight\":1,\"rank\":0,\"size\":2,\"reason\":\"end\",\"time\":5}\n"
                + line(1, "reduceScatter", -1, "f64", 2, "MAX"));
        assertThatThrownBy(() -> FlightFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage(file + ":2: unknown operation \"reduceScatter\"");
    }

    @Test
    void linksWhereTheFileGoesAreReplacedNotFollowed(@TempDir Path dir) throws IOException {
        Path target = Files.writeString(dir.resolve("precious"), "keep");
        Path out = Files.createDirectory(dir.resolve("out"));
        Files.createSymbolicLink(out.resolve("flight-rank0.jsonl.tmp"), target);
        Files.createSymbolicLink(out.resolve("flight-rank0.jsonl"), target);
        FlightDump dump = new FlightDump(0, 1, "end", 1_700_000_003_000L, List.of());
        Path file = FlightFile.write(new OutputDirectory(out, "WEFT_FLIGHT_DIR"), dump);
        assertThat(Files.readString(target)).isEqualTo("keep");
        assertThat(Files.isSymbolicLink(file)).isFalse();
        assertThat(FlightFile.read(file)).isEqualTo(dump);
    }

    @Test
    void aBinaryOrDeeplyNestedFileIsAnErrorNamingIt(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("flight-rank0.jsonl");
        Files.write(file, new byte[] {'{', '"', (byte) 0xff, '"'});
        assertThatThrownBy(() -> FlightFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage(file + " is not UTF-8 text (byte offset 2)");
        Files.writeString(file, "[".repeat(100_000));
        assertThatThrownBy(() -> FlightFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage(file + ":1: bad JSON at line 1, column 513: arrays and objects nested deeper than 512");
    }

    @Test
    void aBrokenFileIsAnErrorNamingItsLine(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("flight-rank0.jsonl");
        Files.writeString(file, "{\"weft_flight\":1,\"rank\":0,\"size\":1,\"reason\":\"end\",\"time\":5}\n{\"seq\":1,\n");
        assertThatThrownBy(() -> FlightFile.read(file)).isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ":2: ");
        Files.writeString(file, "{\"something\":\"else\"}\n");
        assertThatThrownBy(() -> FlightFile.read(file)).hasMessageContaining(":1: not a weft flight file");
    }
}
