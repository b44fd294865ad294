package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.it.ad.CommGradTest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Gradients through every differentiable communication under {@code mpirun -np 2} ({@link GradProgram}). */
class MpiGradTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void everyCaseMatchesFiniteDifferencesUnderMpirun(Mpirun.Flavor flavor) throws Exception {
        MpiParityTest.requireLauncher(flavor);
        Mpirun.Result r = Mpirun.run(flavor, 2, TIMEOUT, Map.of(), GradProgram.class);
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        int cases = CommGradTest.cases().size();
        assertThat(r.output()).contains("rank 0: " + cases + " cases ok", "rank 1: " + cases + " cases ok");
    }
}
