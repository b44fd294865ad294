package dev.weft.backends.comm.flight;

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
                new FlightEntry(7, new FlightCall(FlightOp.SENDRECV, "world.split(1)#0", 1, 3, 2, 5, 0, 6, "f64", 10,
                        null, odd), -1, -1, FlightState.STARTED, 1_700_000_000_123L, -1),
                new FlightEntry(8, new FlightCall(FlightOp.ALLREDUCE, "world", 1, 3, -1, -1, -1, -1, "f32", 4, "SUM",
                        SourceLocation.UNKNOWN), 3, -1, FlightState.COMPLETED, 1_700_000_000_200L,
                        1_700_000_000_210L));
        FlightDump dump = new FlightDump(1, 3, "timeout", 1_700_000_003_000L, entries);
        Path file = FlightFile.write(dir, dump);
        assertThat(file.getFileName()).hasToString("flight-rank1.jsonl");
        assertThat(Files.readAllLines(file)).hasSize(3);
        assertThat(FlightFile.read(file)).isEqualTo(dump);
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
