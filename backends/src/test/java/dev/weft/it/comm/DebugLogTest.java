package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.backends.cli.FakeRanks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code WEFT_DEBUG=1} logs one line per executed communication call; checked in a child JVM on 2 fake ranks. */
class DebugLogTest {
    @Test
    void everyCommCallIsLoggedWithRankOpCountAndSeconds() throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-XX:+EnableDynamicAgentLoading",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                FakeRanks.class.getName(), "2", DebugLogProgram.class.getName());
        pb.environment().put("WEFT_DEBUG", "1");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        p.getOutputStream().close();
        boolean ended = p.waitFor(90, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(ended).as("child JVM ended in time").isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        List<String> log = out.lines().filter(l -> l.matches("r\\d+ \\| .*")).toList();
        assertThat(log).as(out).allMatch(l -> l.matches("r[01] \\| [a-z_]+ \\| \\d+ items \\| \\d+\\.\\d{6}"));
        for (int r = 0; r < 2; r++) {
            String rank = "r" + r + " | ";
            assertThat(log.stream().filter(l -> l.startsWith(rank)).map(l -> l.split(" \\| "))
                    .map(f -> f[1] + " " + f[2])).as(out)
                    .containsExactly("allreduce 7 items", "isend 7 items", "irecv 7 items", "wait 7 items",
                            "wait 7 items");
        }
    }
}
