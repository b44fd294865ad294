package dev.weft.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.Tensor;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.RankRunner;
import dev.weft.testing.TensorAssert;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each example's {@code main} on 1 to 4 fake ranks, as {@code bin/weft run --comm fake} runs it: it must finish on
 * every rank (the examples check their own answers) and rank 0 prints its one result line.
 */
@Isolated
class ExamplesTest {
    private static final String NUMBER = "-?\\d+\\.\\d+(e[+-]\\d+)?";

    /** Runs {@code main} on {@code n} fake ranks and returns what they printed to standard output. */
    private static String run(int n, Consumer<String[]> main) {
        PrintStream saved = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            RankRunner.run(n, world -> main.accept(new String[0]));
        } finally {
            System.setOut(saved);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void pi(int n) {
        String out = run(n, Pi::main);
        assertThat(out).matches("pi = 3\\.14\\d+ error = " + NUMBER + "\\R");
        double error = Double.parseDouble(out.trim().split(" = ")[2]);
        assertThat(error).isLessThan(1e-6);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void ring(int n) {
        assertThat(run(n, Ring::main)).isEqualTo("ring ok" + System.lineSeparator());
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void heat(int n) {
        String out = run(n, Heat::main);
        assertThat(out).matches("heat max_error = " + NUMBER + "\\R");
        assertThat(Double.parseDouble(out.trim().split(" = ")[1])).isLessThan(1e-4);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void heatGlobal(int n) {
        String out = run(n, HeatGlobal::main);
        assertThat(out).matches("heat_global max_error = " + NUMBER + "\\R");
        assertThat(Double.parseDouble(out.trim().split(" = ")[1])).isLessThan(1e-12);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 6})
    void poisson(int n) {
        String out = run(n, Poisson::main);
        assertThat(out).matches("poisson iterations = \\d+ max_error = " + NUMBER + "\\R");
        assertThat(Double.parseDouble(out.trim().split(" = ")[2])).isLessThan(1e-8);
    }

    @Test
    void heatStepReadsItsNeighboursAsPiecesOfTheGridAndItsHalos() {
        AtomicReference<String> mlir = new AtomicReference<>();
        RankRunner.run(1, world -> mlir.set(Weft.lower(Heat.class, "simulate", world, TensorSpec.of(DType.F64, 8, 6),
                3, 0.1).toMlir()));
        // operands: the zero halo row, the grid (three times), 4.0, the grid, 0.1, then the pad value 0.0
        assertThat(mlir.get()).doesNotContain("stablehlo.slice").doesNotContain("stablehlo.concatenate")
                .doesNotContain("stablehlo.pad").doesNotContain("weft.slice_starts")
                .contains("weft.pieces = [["
                        + piece(0, "0, 0", "0, 0", "1, 6") + ", " + piece(1, "1, 0", "0, 0", "7, 6") + "], ["
                        + piece(1, "0, 0", "1, 0", "7, 6") + ", " + piece(0, "7, 0", "0, 0", "1, 6") + "], ["
                        + piece(2, "0, 1", "0, 0", "8, 5") + ", " + piece(7, "0, 0", "", "8, 1") + "], ["
                        + piece(3, "0, 0", "0, 1", "8, 5") + ", " + piece(7, "0, 5", "", "8, 1") + "], [], [], []]");
    }

    private static String piece(int operand, String at, String from, String size) {
        return "{operand = " + operand + " : i64, at = array<i64: " + at + ">, from = array<i64"
                + (from.isEmpty() ? "" : ": " + from) + ">, size = array<i64: " + size + ">}";
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void dataParallelReachesTheOneRankLoss(int n) {
        String out = run(n, DataParallel::main);
        assertThat(out).matches("loss = " + NUMBER + "\\R");
        double oneRank = loss(run(1, DataParallel::main));
        assertThat(loss(out)).isNotNegative().isCloseTo(oneRank, within(1e-6));
    }

    private static double loss(String line) {
        return Double.parseDouble(line.trim().split(" = ")[1]);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void dataParallelWeightsFromGradEqualThoseOfTheHandWrittenGradient(int n) {
        RankRunner.run(n, world -> {
            List<Tensor> data = DataParallel.shard(world.rank(), world.size());
            Tensor x = data.get(0), y = data.get(1);
            Tensor w = Tensor.zeros(DType.F64, DataParallel.FEATURES);
            Tensor fromGrad = DataParallel.train(world, x, y, w, DataParallel.EPOCHS, DataParallel.LEARNING_RATE)
                    .getFirst();
            for (int epoch = 0; epoch < DataParallel.EPOCHS; epoch++) {
                Tensor residual = x.matmul(w).sub(y);
                Tensor grad = world.allreduce(x.transpose().matmul(residual), ReduceOp.SUM)
                        .mul(2.0 / DataParallel.SAMPLES);
                w = w.sub(grad.mul(DataParallel.LEARNING_RATE));
            }
            TensorAssert.assertThat(fromGrad).isCloseTo(w, 1e-12);
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 4})
    void mlpClassifiesTheSetAndMatchesTheOneRankWeights(int n) {
        String out = run(n, Mlp::main);
        assertThat(out).matches("mlp accuracy = (0\\.9[7-9]\\d*|1\\.0+) loss = " + NUMBER + "\\R");
    }
}
