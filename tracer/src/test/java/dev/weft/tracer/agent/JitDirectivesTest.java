package dev.weft.tracer.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Installing the agent adds its compiler directives to this JVM, which {@code jcmd} then lists. */
class JitDirectivesTest {
    @Test
    void theAgentLeavesTheClassFileApiToC1() throws Exception {
        WeftAgent.install();
        String reply = WeftAgent.compilerDirectives().orElseThrow().get(30, TimeUnit.SECONDS);
        assertThat(reply).isEqualTo("5 compiler directives added");
        String listed = jcmd("Compiler.directives_print");
        assertThat(listed).contains("jdk/internal/classfile/*.*").contains("java/lang/classfile/*.*")
                .contains("java/lang/invoke/MethodType.makeImpl").contains("-java/lang/invoke/MethodType.makeImpl")
                .contains("GeneratedFusedLoop*.scalar").contains("-dev/weft/backends/cpu/exec/GeneratedFusedLoop*.*")
                .contains("-dev/weft/backends/comm/*.*");
    }

    private static String jcmd(String command) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(ProcessHandle.current().pid()), command)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
