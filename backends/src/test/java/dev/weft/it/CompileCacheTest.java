package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A {@code @Compile} body runs once per signature: argument shapes and dtypes, constants and receiver. */
class CompileCacheTest {
    private static int staticTraces;

    /** A receiver whose field the compiled body reads as a constant. */
    static final class Shifter {
        private final double offset;
        private int traces;

        Shifter(double offset) {
            this.offset = offset;
        }

        @Compile
        Tensor shifted(Tensor x) {
            traces++;
            return x.add(offset);
        }
    }

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor scaled(Tensor x, int k) {
        staticTraces++;
        return x.mul(k);
    }

    @Test
    void staticMethodTracesOncePerSignature() {
        assertThat(scaled(Tensor.of(new float[] {1, 2}), 3).toDoubleArray()).containsExactly(3, 6);
        assertThat(staticTraces).isEqualTo(1);
        assertThat(scaled(Tensor.of(new float[] {4, -5}), 3).toDoubleArray()).containsExactly(12, -15);
        assertThat(staticTraces).as("same shape and dtype again").isEqualTo(1);
        assertThat(scaled(Tensor.of(new float[] {1, 2, 3}), 3).toDoubleArray()).containsExactly(3, 6, 9);
        assertThat(staticTraces).as("another shape").isEqualTo(2);
        assertThat(scaled(Tensor.of(new int[] {7, 8}), 3).toIntArray()).containsExactly(21, 24);
        assertThat(staticTraces).as("another dtype").isEqualTo(3);
        assertThat(scaled(Tensor.of(new float[] {1, 2}), 5).toDoubleArray()).containsExactly(5, 10);
        assertThat(staticTraces).as("another int constant").isEqualTo(4);
        assertThat(scaled(Tensor.of(new float[] {0.5f, 2}), 3).toDoubleArray()).containsExactly(1.5, 6);
        assertThat(scaled(Tensor.of(new int[] {-1, 0}), 3).toIntArray()).containsExactly(-3, 0);
        assertThat(scaled(Tensor.of(new float[] {2, 2}), 5).toDoubleArray()).containsExactly(10, 10);
        assertThat(staticTraces).as("every signature seen before").isEqualTo(4);
    }

    @Test
    void instanceReceiversAreSeparateKeys() {
        Shifter one = new Shifter(1), ten = new Shifter(10);
        Tensor x = Tensor.of(new double[] {1, 2});
        assertThat(one.shifted(x).toDoubleArray()).containsExactly(2, 3);
        assertThat(ten.shifted(x).toDoubleArray()).containsExactly(11, 12);
        assertThat(one.shifted(Tensor.of(new double[] {5, 6})).toDoubleArray()).containsExactly(6, 7);
        assertThat(ten.shifted(Tensor.of(new double[] {5, 6})).toDoubleArray()).containsExactly(15, 16);
        assertThat(one.traces).isEqualTo(1);
        assertThat(ten.traces).isEqualTo(1);
    }
}
