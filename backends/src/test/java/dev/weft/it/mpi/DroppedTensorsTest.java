package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Memory that dropped tensors held goes back to the system, in a JVM of its own so that its RSS is theirs alone. */
class DroppedTensorsTest {
    /**
     * 80 buffers of 8 MiB held at once, then 2,000 dropped one by one. The pool of freed large buffers keeps 64 MiB
     * and the pacer lets 256 MiB of dropped ones accumulate, so ~330 MiB stay resident with the JVM's ~40 MiB; a
     * pool that kept up to 1 GiB kept the 640 MiB once held (1.4 to 3.4 GiB resident here).
     */
    @Test
    void droppedLargeTensorsAreReturnedToTheSystemBeyondThePool() throws Exception {
        assumeThat(Files.isReadable(Path.of("/proc/self/status"))).as("Linux /proc").isTrue();
        Mpirun.Result r = Mpirun.plain(Duration.ofSeconds(180), DroppedTensors.class, "80", "2000",
                Integer.toString(2 << 20));
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        Matcher m = Pattern.compile("(?m)^rss (\\d+)$").matcher(r.output());
        assertThat(m.find()).as("output:%n%s", r.output()).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("resident MiB").isLessThan(400);
    }
}
