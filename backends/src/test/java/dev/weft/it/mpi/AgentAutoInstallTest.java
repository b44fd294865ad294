package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.weft.backends.cpu.cc.CCompiler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code @Compile} methods compile in a plain JVM that neither passes {@code -javaagent} nor calls
 * {@code Weft.install()} (launched with {@link Mpirun#plain}, as a user would run a program).
 */
class AgentAutoInstallTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void aCompileMethodIsTracedWithoutInstallingTheAgent() throws Exception {
        Mpirun.Result r = Mpirun.plain(TIMEOUT, AutoInstallProgram.class, "compiled");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("traced=true result=[2. 4.]");
    }

    @Test
    void aCompileBodyThatMakesTheFirstTensorFailsAtItsLineThenCompiles() throws Exception {
        Mpirun.Result r = Mpirun.plain(TIMEOUT, AutoInstallProgram.class, "inside");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        String expect = r.output().lines().filter(l -> l.startsWith("expect ")).findFirst().orElseThrow()
                .substring("expect ".length());
        assertThat(r.output()).contains("error " + expect + ": @Compile method AutoInstallProgram.ones started"
                + " before Weft's agent was installed", "Weft.install()", "traced=true");
    }

    @Test
    void withoutAnAgentEachCompileMethodIsNamedOnceAndRunsEagerly() throws Exception {
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        flags.add("-XX:-EnableDynamicAgentLoading");
        Mpirun.Result r = Mpirun.plain(TIMEOUT, flags, AutoInstallProgram.class, "twice-thrice");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("weft: could not install the @Compile agent", "traced=false result=[2. 4.]");
        assertThat(r.output().split("@Compile method dev.weft.it.mpi.AutoInstallProgram.twice \\(AutoInstallProgram"
                + "\\.java:\\d+\\) runs eagerly on every call", -1)).as("output:%n%s", r.output()).hasSize(2);
    }

    @Test
    void aJvmWithoutTheVectorModuleOrACCompilerSaysOnceThatLoopsAreScalar() throws Exception {
        Mpirun.Result r = Mpirun.plain(TIMEOUT, withoutVectorModule(), Map.of("WEFT_CC", "off"),
                AutoInstallProgram.class, "compiled");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("traced=true result=[2. 4.]");
        assertThat(r.output().split("without jdk.incubator.vector and without a C compiler, so fused loops are scalar",
                -1)).as("output:%n%s", r.output()).hasSize(2);
    }

    /** bin/weft's setup where a C compiler makes fused loops native: no module, and nothing said about it. */
    @Test
    void aJvmWithoutTheVectorModuleButWithACCompilerSaysNothing() throws Exception {
        assumeThat(CCompiler.configured()).as("a C compiler").isPresent();
        Mpirun.Result r = Mpirun.plain(TIMEOUT, withoutVectorModule(), Map.of(), AutoInstallProgram.class,
                "compiled");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("traced=true result=[2. 4.]").doesNotContain("jdk.incubator.vector");
    }

    private static List<String> withoutVectorModule() {
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        int at = flags.indexOf("--add-modules");
        flags.subList(at, at + 2).clear();
        return flags;
    }

    @Test
    void aCompileClassFirstLoadedWhileTheAgentInstallsIsCompiled() throws Exception {
        Mpirun.Result r = Mpirun.plain(TIMEOUT, LoadOrderProgram.class);
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("helper traced=true");
    }
}
