package dev.weft.it.statics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.cli.FakeRanks;
import dev.weft.backends.cli.UserClass;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.RankRunner;
import dev.weft.testing.Ranks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fake ranks give a program that keeps its rank, communicator and per-rank arrays in static fields the answer
 * {@code mpirun} gives (each rank its own copy of the user's classes), and refuse, at the writing line, a static
 * field written by two ranks where the ranks share the class.
 */
class PerRankStaticsTest {
    /** Per rank of this class's own copy: set on each rank in the {@code @Ranks} method. */
    static int rank = -1;
    static Comm comm;
    static float[] mine;

    /** Set by {@code @BeforeEach} on JUnit's instance; each rank's instance gets them. */
    private Tensor base;
    private int scale;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @BeforeEach
    void setUp() {
        base = Tensor.of(new float[] {1, 2});
        scale = 3;
    }

    @Ranks({2, 3})
    void eachRanksInstanceGetsWhatBeforeEachSet(Comm world) {
        assertThat(base).as("a tensor field @BeforeEach set").isNotNull();
        assertThat(world.allreduce(base.mul(scale), ReduceOp.SUM).toFloatArray())
                .containsExactly(3f * world.size(), 6f * world.size());
    }

    /** What rank {@code r} of {@code n} computes under mpirun: see {@link StaticsProgram#main}. */
    private static String mpiAnswer(int r, int n) {
        float total = n * (n + 1) / 2f;
        return "sum=" + (double) total + " all=[" + total + ", " + 10 * total + "] shifted=[" + (float) (2 * r + 1)
                + ", " + (float) (11 * r + 10) + "] traces=1";
    }

    private static List<String> answers(int n) {
        return IntStream.range(0, n).mapToObj(r -> System.getProperty("weft.statics." + r)).toList();
    }

    private static void clearAnswers() {
        IntStream.range(0, 8).forEach(r -> System.clearProperty("weft.statics." + r));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void binWeftRunGivesEachRankItsOwnStatics(int n) {
        clearAnswers();
        FakeRanks.run(n, UserClass.entry(StaticsProgram.class.getName()), new String[0]);
        assertThat(answers(n)).containsExactlyElementsOf(IntStream.range(0, n).mapToObj(r -> mpiAnswer(r, n))
                .toList());
    }

    @Ranks({2, 3})
    void ranksTestMethodsRunOnTheirOwnCopyOfTheTestClass(Comm world) {
        assertThat(rank).as("a fresh copy's static").isEqualTo(-1);
        comm = world;
        rank = world.rank();
        mine = new float[] {rank, rank};
        int n = world.size();
        world.barrier();
        assertThat(comm.allreduce(Tensor.of(new float[] {rank + 1}, 1), ReduceOp.SUM).toFloatArray())
                .containsExactly(n * (n + 1) / 2f);
        assertThat(comm.allreduce(Tensor.of(mine, 2), ReduceOp.MAX).toFloatArray()).containsExactly(n - 1, n - 1);
        assertThat(rank).isEqualTo(world.rank());
        StaticsProgram.main(new String[0]);
        assertThat(System.getProperty("weft.statics." + rank)).isEqualTo(mpiAnswer(rank, n));
    }

    @Test
    void aStaticWrittenByTwoRanksOfASharedClassFailsAtItsLine() throws IOException {
        List<String> source = Files.readAllLines(Path.of("src/test/java/dev/weft/it/statics/StaticsProgram.java"));
        int line = source.indexOf("        comm = Comm.world();") + 1;
        assertThat(line).isPositive();
        // the lambda is this class's (JUnit's, shared by the ranks), so the ranks share StaticsProgram too
        assertThatThrownBy(() -> RankRunner.run(3, world -> StaticsProgram.main(new String[0])))
                .isInstanceOf(AssertionError.class)
                // two ranks fail at the write; the first writer's collective then fails naming them
                .hasMessageContaining("3 of 3 ranks failed")
                .hasMessageContaining("WeftException: StaticsProgram.java:" + line + ": static field "
                        + "dev.weft.it.statics.StaticsProgram.comm written on rank ")
                .hasMessageContaining("fake ranks are threads of one JVM and share the statics of "
                        + "dev.weft.it.statics.StaticsProgram (loaded once for every rank), whereas under mpirun each"
                        + " rank is a process with its own");
    }
}
