package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Memory that dropped tensors held goes back to the system, in a JVM of its own so that its RSS is theirs alone. */
class DroppedTensorsTest {
    /** The pacing budget this test gives the JVM, in MiB; the margin is a quarter of it. */
    private static final long BUDGET_MIB = 256;
    /** The JVM's own growth after its first tensor (JIT-compiled code, metaspace), in MiB. */
    private static final long JVM_GROWTH_MIB = 16;

    /**
     * HELD tensors of ELEMENTS f32 values held at once, then COUNT dropped one by one, with a pacing budget of {@value
     * #BUDGET_MIB} MiB and a fixed, pre-touched heap (so that the resident memory's growth is off-heap memory and the
     * JVM's own). The resident memory at the end may exceed the one after the first tensor by the budget, its margin,
     * one tensor (the allocation under way) and {@value #JVM_GROWTH_MIB} MiB: the held tensors, dropped before the
     * last collection started, are freed, and the young and pooled buffers stay within budget plus margin, whatever
     * the machine's load. Before the budget was fixed, 80 held buffers of 8 MiB stayed pooled (1.1–3.4 GiB resident
     * here), and on a loaded machine the adaptive floor left 594–1106 MiB resident.
     */
    @ParameterizedTest(name = "{0} held, then {1} dropped, of {2} f32")
    @CsvSource({"80, 2000, 2097152", "0, 2000, 262144"})
    void droppedTensorsDoNotStayResident(int held, int count, int elements) throws Exception {
        assumeThat(Files.isReadable(Path.of("/proc/self/status"))).as("Linux /proc").isTrue();
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        flags.addAll(List.of("-Dweft.memory.budget=" + BUDGET_MIB + "m", "-Xms96m", "-Xmx96m",
                "-XX:+AlwaysPreTouch"));
        Mpirun.Result r = Mpirun.plain(Duration.ofSeconds(180), flags, DroppedTensors.class, Integer.toString(held),
                Integer.toString(count), Integer.toString(elements));
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        long baseline = mib(r, "baseline");
        long bound = baseline + BUDGET_MIB + BUDGET_MIB / 4 + ((4L * elements) >> 20) + JVM_GROWTH_MIB;
        assertThat(mib(r, "rss")).as("resident MiB (baseline %d MiB); output:%n%s", baseline, r.output())
                .isLessThanOrEqualTo(bound);
    }

    private static long mib(Mpirun.Result r, String key) {
        Matcher m = Pattern.compile("(?m)^" + key + " (\\d+)$").matcher(r.output());
        assertThat(m.find()).as("%s in output:%n%s", key, r.output()).isTrue();
        return Long.parseLong(m.group(1));
    }
}
