package dev.weft.it.mpi;

import dev.weft.DType;
import dev.weft.Weft;
import dev.weft.backends.comm.mpi.MpiWorld;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.spi.CommBinding;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * {@link ParityPrograms} under {@code mpirun}, of Open MPI and of MPICH, print, rank by rank, exactly what they
 * print on fake ranks; a few lines are also checked against values derived here from the inputs. A flavour whose
 * launcher is missing is skipped, unless {@value #REQUIRE_ENV}{@code =1} (set by {@code bin/weft test} where it
 * installs both) makes that a failure.
 */
class MpiParityTest {
    /** Environment variable that turns a missing MPI launcher from a skip into a failure. */
    static final String REQUIRE_ENV = "WEFT_REQUIRE_MPI";
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    /** The thread levels in the order of MPI's codes. */
    private static final List<String> LEVELS = List.of("single", "funneled", "serialized", "multiple");

    @BeforeAll
    static void install() {
        Weft.install();
    }

    static Stream<Arguments> flavorsAndRanks() {
        return Stream.of(Mpirun.Flavor.values()).flatMap(f -> Stream.of(2, 3, 4).map(n -> Arguments.of(f, n)));
    }

    static Stream<Arguments> flavorsAndLevels() {
        return Stream.of(Mpirun.Flavor.values())
                .flatMap(f -> LEVELS.stream().skip(1).map(level -> Arguments.of(f, level)));
    }

    @ParameterizedTest(name = "{0}, {1} ranks")
    @MethodSource("flavorsAndRanks")
    void mpiRanksPrintWhatFakeRanksPrint(Mpirun.Flavor flavor, int n, @TempDir Path dir) throws Exception {
        requireLauncher(flavor);
        Mpirun.Result mpi = Mpirun.run(flavor, n, TIMEOUT, Map.of(), ParityPrograms.class, dir.toString());
        assertThat(mpi.exitCode()).as("mpirun output:%n%s", mpi.output()).isZero();
        List<List<String>> fake = fakeRun(n);
        for (int r = 0; r < n; r++) {
            List<String> lines = Files.readAllLines(dir.resolve("rank-" + r + ".txt"));
            assertThat(lines).as("rank %d", r).containsExactlyElementsOf(fake.get(r));
            assertThat(Files.readString(dir.resolve("library-" + r + ".txt"))).as("library of rank %d", r)
                    .contains(flavor == Mpirun.Flavor.OPEN_MPI ? "libmpi.so.40 (Open MPI" : "(MPICH");
            assertThat(Files.readString(dir.resolve("thread-level-" + r + ".txt"))).as("MPI_THREAD_SINGLE")
                    .isEqualTo("0");
            for (String t : List.of("f32", "f64", "i32", "i64")) {
                String[][] same = {{"iallreduce sum", "allreduce sum"}, {"iallreduce max", "allreduce max"},
                    {"iallgather", "allgather"}, {"ireduce_scatter", "reduce_scatter"}, {"ibcast", "bcast"},
                    {"ialltoall", "alltoall"}};
                for (String[] pair : same) {
                    assertThat(value(lines, "eager " + t + " " + pair[0])).as("rank %d %s %s", r, t, pair[0])
                            .isEqualTo(value(lines, "eager " + t + " " + pair[1]));
                }
                for (int i = 0; i < 4; i++) {
                    String v = " variable counts[" + i + "]";
                    assertThat(value(lines, "compiled " + t + v)).as("rank %d %s%s", r, t, v)
                            .isEqualTo(value(lines, "eager " + t + v));
                }
                for (int i = 0; i < 6; i++) {
                    int blocking = i < 5 ? i : 6;
                    assertThat(value(lines, "compiled " + t + " nonblocking[" + i + "]")).as("rank %d %s #%d", r, t, i)
                            .isEqualTo(value(lines, "compiled " + t + " collectives[" + blocking + "]"));
                }
            }
            assertThat(lines).as("rank %d", r).contains("overlapping allreduce = [" + 10 * r + ", "
                    + 5 * n * (n - 1) + ", " + (5 * n * (n - 1) + n) + ", " + (10 * r + 3) + "]");
            assertThat(lines).as("rank %d", r)
                    .contains("eager f64 allreduce first = " + ParityPrograms.bits(ParityPrograms.input(DType.F64, 0, 2 * n)))
                    .contains("eager f64 allreduce last = "
                            + ParityPrograms.bits(ParityPrograms.input(DType.F64, n - 1, 2 * n)))
                    .contains("eager i64 allreduce sum = i64[" + 2 * n + "] " + sumOfInputs(n))
                    .contains("world Comm(world, rank " + r + " of " + n + ")");
            // colour r % 2, ordered by -r: the same-parity ranks above this one come first
            int members = (n - r % 2 + 1) / 2;
            assertThat(lines).as("rank %d", r).contains("split Comm(world.split(" + r % 2 + ")#0, rank "
                    + (members - 1 - r / 2) + " of " + members + ")");
        }
        System.out.printf("%s mpirun -np %d: %d lines per rank, %.1f s%n", flavor, n, fake.getFirst().size(),
                mpi.elapsed().toMillis() / 1e3);
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("flavorsAndLevels")
    void everyThreadLevelRunsTheSamePrograms(Mpirun.Flavor flavor, String level, @TempDir Path dir)
            throws Exception {
        requireLauncher(flavor);
        int n = 2;
        Mpirun.Result mpi = Mpirun.run(flavor, n, TIMEOUT, Map.of(MpiWorld.THREAD_LEVEL_ENV, level),
                ParityPrograms.class, dir.toString());
        assertThat(mpi.exitCode()).as("mpirun output:%n%s", mpi.output()).isZero();
        List<List<String>> fake = fakeRun(n);
        for (int r = 0; r < n; r++) {
            assertThat(Files.readAllLines(dir.resolve("rank-" + r + ".txt"))).as("rank %d", r)
                    .containsExactlyElementsOf(fake.get(r));
            assertThat(Files.readString(dir.resolve("thread-level-" + r + ".txt"))).as("MPI_THREAD_" + level)
                    .isEqualTo(Integer.toString(LEVELS.indexOf(level)));
        }
    }

    /** What line {@code label = ...} of {@code lines} says. */
    private static String value(List<String> lines, String label) {
        return lines.stream().filter(l -> l.startsWith(label + " = ")).findFirst()
                .map(l -> l.substring(label.length() + 3)).orElseThrow(() -> new AssertionError("no line " + label));
    }

    /** Skips the test when {@code flavor}'s launcher is missing, or fails it under {@value #REQUIRE_ENV}. */
    static void requireLauncher(Mpirun.Flavor flavor) {
        if (flavor.launcher().isPresent()) {
            return;
        }
        if ("1".equals(System.getenv(REQUIRE_ENV))) {
            fail(flavor.missing() + ", and " + REQUIRE_ENV + "=1 requires it");
        }
        abort(flavor.missing());
    }

    /** Element {@code i} of {@code Σ_r input(r)} for the integer inputs, written like {@code bits}. */
    private static String sumOfInputs(int n) {
        List<String> sums = new ArrayList<>();
        for (int i = 0; i < 2 * n; i++) {
            long s = 0;
            for (int r = 0; r < n; r++) {
                s += (r * 7 + i * 3) % 9 - 4;
            }
            sums.add(Long.toString(s));
        }
        return String.join(" ", sums);
    }

    private static List<List<String>> fakeRun(int n) {
        List<List<String>> lines = new ArrayList<>(Collections.nCopies(n, null));
        FakeWorld.run(n, world -> CommBinding.with(world, () -> {
            Comm c = Comm.world();
            lines.set(c.rank(), ParityPrograms.run(c));
            return null;
        }));
        return lines;
    }
}
