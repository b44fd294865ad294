package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.it.ad.CommGradTest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Gradients through every differentiable communication under {@code mpirun -np 2} and 3 ({@link GradProgram}). */
class MpiGradTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void everyCaseMatchesFiniteDifferencesUnderMpirun(Mpirun.Flavor flavor) throws Exception {
        MpiParityTest.requireLauncher(flavor);
        for (int n = 2; n <= 3; n++) {
            Mpirun.Result r = Mpirun.run(flavor, n, TIMEOUT, Map.of(), GradProgram.class);
            assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
            int cases = CommGradTest.cases().size();
            for (int rank = 0; rank < n; rank++) {
                assertThat(r.output()).contains("rank " + rank + ": " + cases + " cases ok");
            }
        }
    }
}
