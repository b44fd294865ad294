package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Static;
import dev.weft.Tensor;
import dev.weft.Weft;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A method compiled more than 8 times says so once on stderr, naming the argument whose change caused the last
 * compile (here a {@code @Static} number); a tensor argument whose values change does not recompile.
 */
class RecompileWarningTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor scaled(Tensor x, @Static double rate) {
        return x.mul(rate);
    }

    @Compile
    static Tensor scaledByTensor(Tensor x, Tensor rate) {
        return x.mul(rate);
    }

    @Test
    void aChangingNumberIsNamedOnceAfterEightCompiles() {
        Tensor x = Tensor.of(new double[] {1, 2});
        String text = Stderr.of(() -> {
            for (int k = 1; k <= 12; k++) {
                assertThat(scaled(x, k * 0.5).toDoubleArray()).containsExactly(k * 0.5, k);
                assertThat(scaledByTensor(x, Tensor.scalar(DType.F64, k)).toDoubleArray()).containsExactly(k, 2 * k);
            }
        });
        assertThat(text.lines().filter(l -> l.contains("has been compiled")).toList()).hasSize(1);
        assertThat(text).contains("RecompileWarningTest.scaled(Tensor, double) has been compiled 9 times")
                .contains("argument 1").contains("changed from 4.0 to 4.5").doesNotContain("scaledByTensor");
    }
}
