package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import org.junit.jupiter.api.Test;

/** {@code Tensor.toString} prints like NumPy's {@code str()}. */
class TensorToStringTest {
    @Test
    void floatsPrintLikeNumpy() {
        assertThat(Tensor.of(new float[] {1, 2.5f, -3, 4, 5, 6}, 2, 3)).hasToString("[[1. 2.5 -3.]\n [4. 5. 6.]]");
        assertThat(Tensor.of(new double[] {Double.NaN, Double.POSITIVE_INFINITY, 0.125})).hasToString("[nan inf 0.125]");
    }

    @Test
    void integersBooleansAndScalars() {
        assertThat(Tensor.of(new int[] {1, -2, 3})).hasToString("[1 -2 3]");
        assertThat(Tensor.of(new boolean[] {true, false})).hasToString("[True False]");
        assertThat(Tensor.scalar(DType.I64, 7)).hasToString("7");
    }

    @Test
    void rank3SeparatesBlocksWithABlankLine() {
        assertThat(Tensor.arange(DType.I32, 8).reshape(2, 2, 2)).hasToString("[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
    }

    @Test
    void largeTensorsAreElided() {
        assertThat(Tensor.arange(DType.I32, 2000).toString()).isEqualTo("[0 1 2 ... 1997 1998 1999]");
    }
}
