package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code Tensor.full} (and so {@code zeros}, {@code ones}) sets every element to the value converted to the dtype,
 * bit for bit for negative zero and NaN, at sizes around the bulk fill's doublings, including empty and rank 0.
 */
class TensorFullTest {
    private static final long[][] SHAPES = {{}, {0}, {1}, {2}, {3}, {5, 7}, {1000}, {3, 0, 2}, {257, 255}};
    private static final double[] VALUES = {0, -0.0, 1, -2.75, 3e9, Double.NaN, Double.NEGATIVE_INFINITY};

    @ParameterizedTest
    @EnumSource(DType.class)
    void everyElementIsTheValue(DType t) {
        for (double v : VALUES) {
            if (t.isInteger() && !Double.isFinite(v)) {
                continue;
            }
            double expected = Tensor.scalar(t, v).item();
            for (long[] shape : SHAPES) {
                Tensor full = Tensor.full(t, v, shape);
                long n = 1;
                for (long d : shape) {
                    n *= d;
                }
                assertThat(full.shape()).isEqualTo(shape);
                double[] got = full.toDoubleArray();
                assertThat(got).as("%s %s %s", t, v, java.util.Arrays.toString(shape)).hasSize((int) n);
                for (int i = 0; i < n; i++) {
                    assertThat(Double.doubleToRawLongBits(got[i])).as("%s %s element %d", t, v, i)
                            .isEqualTo(Double.doubleToRawLongBits(expected));
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void zerosAndOnes(DType t) {
        assertThat(Tensor.zeros(t, 33, 3).toDoubleArray()).containsOnly(0.0).hasSize(99);
        assertThat(Tensor.ones(t, 33, 3).toDoubleArray()).containsOnly(1.0).hasSize(99);
    }
}
