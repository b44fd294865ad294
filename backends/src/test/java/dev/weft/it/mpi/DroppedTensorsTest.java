package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Memory that dropped tensors held goes back to the system, in a JVM of its own so that its RSS is theirs alone. */
class DroppedTensorsTest {
    /**
     * HELD tensors of ELEMENTS f32 values held at once, then COUNT dropped one by one. The pacer lets 256 MiB of
     * dropped buffers accumulate (its floor grows only while the program keeps its cores busy, and this one runs on one
     * thread: so it needs two cores), and the pool of freed large ones keeps at most that, so ~330 MiB stay resident
     * with the JVM's ~40 MiB. Before, 80 held buffers of 8 MiB stayed pooled (1.1–3.4 GiB resident here) and 1 MiB
     * buffers were not paced at all (2 GiB).
     */
    @ParameterizedTest(name = "{0} held, then {1} dropped, of {2} f32")
    @CsvSource({"80, 2000, 2097152", "0, 2000, 262144"})
    void droppedTensorsDoNotStayResident(int held, int count, int elements) throws Exception {
        assumeThat(Files.isReadable(Path.of("/proc/self/status"))).as("Linux /proc").isTrue();
        assumeThat(Runtime.getRuntime().availableProcessors()).as("cores").isGreaterThan(1);
        Mpirun.Result r = Mpirun.plain(Duration.ofSeconds(180), DroppedTensors.class, Integer.toString(held),
                Integer.toString(count), Integer.toString(elements));
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        Matcher m = Pattern.compile("(?m)^rss (\\d+)$").matcher(r.output());
        assertThat(m.find()).as("output:%n%s", r.output()).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("resident MiB").isLessThan(400);
    }
}
