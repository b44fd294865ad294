package dev.weft.bench.weft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.bench.Measurement;
import dev.weft.spi.CommBinding;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C references compute what the Weft benchmark programs compute: each is compiled as {@code bin/weft bench}
 * compiles it, run on a tiny input, and its check value compared with the Weft program's (numbers, not times).
 */
class ReferencesAgreeTest {
    @TempDir
    static Path bin;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Test
    void chain() throws Exception {
        Measurement c = Measurement.parse(exec(List.of(compile("gcc", "chain"), "3000", "1", "1")));
        Measurement weft = Measurement.parse(onRanks(1, ChainBench::run, "3000", "1", "1"));
        double expected = 0;
        for (int i = 0; i < 3000; i++) {
            float x = (float) ((i % 1000) * 0.001 - 0.5);
            expected += Math.abs((float) Math.sin(x * 2f + 1f) * x - 0.5f);
        }
        assertThat(c.check().getAsDouble()).isCloseTo(expected, withinPercentage(1e-4));
        assertThat(weft.check().getAsDouble()).isCloseTo(expected, withinPercentage(1e-4));
    }

    /** Case 8's loops compute case 1's chain, whichever way they release the results. */
    @Test
    void freshLoopsComputeTheChain() {
        double chain = Measurement.parse(onRanks(1, ChainBench::run, "3000", "1", "1")).check().getAsDouble();
        for (String mode : List.of("plain", "scope", "donate")) {
            Measurement m = Measurement.parse(onRanks(1, FreshLoopBench::run, mode, "3000", "3", "2"));
            assertThat(m.check().getAsDouble()).as(mode).isEqualTo(chain);
            assertThat(m.samples()).as(mode).hasSize(3);
            assertThat(m.info()).as(mode).anySatisfy(i -> assertThat(i).startsWith("warm: median"));
        }
    }

    /** Case 8's bandwidth limit passes over the chain's bytes once: y = x * 0.5 on two threads, no check value. */
    @Test
    void theBandwidthLimitScalesItsInput() throws Exception {
        Measurement c = Measurement.parse(exec(List.of(compile("gcc", "stream"), "3001", "2", "1")));
        double expected = 0;
        for (int i = 0; i < 3001; i++) {
            expected += (float) ((i % 1000) * 0.001 - 0.5) * 0.5f;
        }
        assertThat(c.check()).isEmpty();
        assertThat(c.samples()).hasSize(2);
        double sum = expected;
        assertThat(c.info()).anySatisfy(i -> assertThat(Double.parseDouble(i.replace("sum of y ", "")))
                .isCloseTo(sum, within(1e-9)));
    }

    @Test
    void allreduceOnTwoRanks() throws Exception {
        assumeThat(onPath("mpicc") && onPath("mpirun")).as("mpicc and mpirun installed").isTrue();
        Measurement c = Measurement.parse(exec(mpirun(compile("mpicc", "allreduce"), "5", "3", "1", "1")));
        Measurement weft = Measurement.parse(onRanks(2, AllreduceBench::run, "5", "3", "1", "1", "6", "2"));
        assertThat(c.check()).hasValue(7.5);
        assertThat(weft.check()).hasValue(7.5);
        assertThat(weft.alongside("cold")).isInstanceOfSatisfying(Measurement.class, cold -> {
            assertThat(cold.samples()).hasSize(2);
            assertThat(cold.check()).hasValue(7.5);
        });
    }

    /**
     * Under MPI, the Weft program loads the C reference built as a shared library and times its loop in turn with
     * its own, in the same job: both series come back, each with its own result.
     */
    @Test
    void allreduceTimesTheCLoopAlongsideUnderMpi() throws Exception {
        assumeThat(onPath("mpicc") && onPath("mpirun")).as("mpicc and mpirun installed").isTrue();
        String lib = bin.resolve("liballreduce.so").toString();
        exec(List.of("mpicc", "-O3", "-march=native", "-shared", "-fPIC", "-o", lib,
                Path.of("c", "allreduce.c").toAbsolutePath().toString()));
        Measurement weft = Measurement.parse(exec(mpirun(Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector",
                "-XX:+EnableDynamicAgentLoading", "-Dnet.bytebuddy.safe=true", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), AllreduceBench.class.getName(), "5", "3", "2", "1",
                "6", "2", lib)));
        assertThat(weft.samples()).hasSize(2);
        assertThat(weft.check()).hasValue(7.5);
        assertThat(weft.alongside("C")).isInstanceOfSatisfying(Measurement.class, c -> {
            assertThat(c.samples()).hasSize(2);
            assertThat(c.min()).isPositive();
            assertThat(c.check()).hasValue(7.5);
        });
        assertThat(weft.alongside("C cold")).isInstanceOfSatisfying(Measurement.class, c -> {
            assertThat(c.samples()).hasSize(2);
            assertThat(c.check()).hasValue(7.5);
        });
    }

    @Test
    void heatOnTwoRanks() throws Exception {
        assumeThat(onPath("mpicc") && onPath("mpirun")).as("mpicc and mpirun installed").isTrue();
        Measurement c = Measurement.parse(exec(mpirun(compile("mpicc", "heat"), "8", "6", "5", "1", "1")));
        Measurement weft = Measurement.parse(onRanks(2, HeatBench::run, "8", "6", "5", "1", "1"));
        assertThat(weft.check().getAsDouble()).isCloseTo(c.check().getAsDouble(),
                within(1e-12));
        assertThat(c.check().getAsDouble()).isGreaterThan(0.1);
    }

    @Test
    void heatOnTheGlobalGridAgreesWithHeat() {
        Measurement byHand = Measurement.parse(onRanks(2, HeatBench::run, "8", "6", "5", "1", "1"));
        Measurement global = Measurement.parse(onRanks(2, HeatGlobalBench::run, "8", "6", "5", "1", "1"));
        assertThat(global.samples()).hasSize(1);
        assertThat(global.check().getAsDouble()).isCloseTo(byHand.check().getAsDouble(), within(1e-12));
        Measurement inTurn = (Measurement) global.alongside("Heat");
        assertThat(inTurn.samples()).as("Heat timed in turn with HeatGlobal").hasSize(1);
        assertThat(inTurn.check().getAsDouble()).isCloseTo(byHand.check().getAsDouble(), within(1e-12));
        assertThat(byHand.check().getAsDouble()).isGreaterThan(0.1);
    }

    /**
     * {@code bin/weft bench osu}'s Weft program on two fake ranks at 8 B: every series of every routine
     * checks the sum over the ranks of their results, computed here from the routine's definition on the inputs
     * (rank r's value i is r + 1 + (i % 16) / 16); under MPI the bench compares C's with the same sums.
     */
    @Test
    void osuRoutinesComputeWhatTheirDefinitionsSay() {
        int p = 2;
        for (OsuRoutine routine : OsuRoutine.values()) {
            Measurement m = Measurement.parse(onRanks(p, OsuBench::run, routine.cName(), "8", "8", "1", "1", "1",
                    "1"));
            double expected = osuExpected(routine, 2, p);
            for (String series : List.of("fori", "call", "first")) {
                assertThat(m.alongside("8 " + series)).as("%s %s", routine, series)
                        .isInstanceOfSatisfying(Measurement.class, s -> {
                            assertThat(s.check()).hasValue(expected);
                            assertThat(s.min()).isPositive();
                        });
            }
        }
    }

    /** The sum over {@code p} ranks of {@code routine}'s results on {@code count} values, from its definition. */
    private static double osuExpected(OsuRoutine routine, int count, int p) {
        double[] own = new double[p];
        double[] all = new double[p];
        for (int r = 0; r < p; r++) {
            for (int i = 0; i < count * p; i++) {
                double v = r + 1 + (i % 16) / 16.0;
                all[r] += v;
                own[r] += i < count ? v : 0;
            }
        }
        double sumOwn = Arrays.stream(own).sum();
        return switch (routine) {
            case ALLREDUCE, IALLREDUCE, ALLGATHER -> p * sumOwn;
            case BCAST -> p * own[0];
            case ALLTOALL -> Arrays.stream(all).sum();
            case GATHER, SENDRECV -> sumOwn;
            case SCATTER -> all[0];
            case SCAN -> {
                double s = 0;
                for (int r = 0; r < p; r++) {
                    s += (p - r) * own[r];
                }
                yield s;
            }
        };
    }

    /**
     * Case 12: PyTorch's training (DDP at two processes) from the inputs TrainData writes gives Weft's losses, at the
     * first step (the check) and the third (the info line), on one and two ranks.
     */
    @Test
    void trainingStepsAgreeWithPyTorch(@TempDir Path inputs) throws Exception {
        String python = "/usr/bin/python3";
        assumeThat(Files.isExecutable(Path.of(python))).as("Debian's python3").isTrue();
        assumeThat(new ProcessBuilder(python, "-c", "import torch").start().waitFor()).as("python3-torch installed")
                .isZero();
        TrainData.write(inputs, 2);
        for (String ranks : List.of("1", "2")) {
            Measurement torch = Measurement.parse(exec(List.of(python, Path.of("python", "train.py")
                    .toAbsolutePath().toString(), inputs.toString(), ranks, "3")));
            Measurement weft = Measurement.parse(onRanks(Integer.parseInt(ranks), TrainBench::run, inputs.toString(),
                    "3"));
            assertThat(weft.samples()).hasSize(3);
            assertThat(torch.samples()).hasSize(3);
            assertThat(weft.check().getAsDouble()).as("%s ranks", ranks)
                    .isCloseTo(torch.check().getAsDouble(), withinPercentage(1e-3));
            assertThat(weft.check().getAsDouble()).as("cross-entropy of 10 classes at the start").isBetween(2.0, 2.6);
            assertThat(lossInfo(weft)).as("%s ranks, third step", ranks)
                    .isCloseTo(lossInfo(torch), withinPercentage(1e-3));
        }
    }

    /** The loss of a training run's info line {@code loss <value> at step <n>}. */
    private static double lossInfo(Measurement m) {
        assertThat(m.info()).hasSize(1);
        return Double.parseDouble(m.info().getFirst().split(" ")[1]);
    }

    /** What {@code program} printed when run on {@code n} fake ranks with {@code args}. */
    private static String onRanks(int n, BiConsumer<String[], PrintStream> program, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        FakeWorld.run(n, world -> CommBinding.with(world, () -> {
            program.accept(args, print);
            return null;
        }));
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String compile(String compiler, String name) throws IOException, InterruptedException {
        String exe = bin.resolve(name).toString();
        exec(List.of(compiler, "-O3", "-march=native", "-o", exe, Path.of("c", name + ".c").toAbsolutePath().toString(),
                "-lm"));
        return exe;
    }

    private static List<String> mpirun(String... program) {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"));
        cmd.addAll(List.of(program));
        return cmd;
    }

    private static boolean onPath(String tool) {
        return Arrays.stream(System.getenv("PATH").split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
    }

    /** The standard output of a command that must exit 0. */
    private static String exec(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("OMPI_ALLOW_RUN_AS_ROOT", "1");
        pb.environment().put("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("%s:%n%s", command, out).isZero();
        return out;
    }
}
