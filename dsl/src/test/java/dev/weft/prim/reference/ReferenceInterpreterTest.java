package dev.weft.prim.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Primitive;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reference interpreter is dsl's eager interpreter, has a rule for every array primitive, and computes what
 * the backends compute on the cases where dtypes matter: wrapping i32, rounding f32, Java's casts, clamped starts,
 * integer division by zero. Each expected value is worked out by hand.
 */
class ReferenceInterpreterTest {
    @Test
    void itIsTheEagerInterpreterOfDslsTests() {
        assertThat(Interpreters.eager()).isInstanceOf(ReferenceInterpreter.class);
    }

    @Test
    void everyArrayPrimitiveHasAReferenceImplementation() {
        ReferenceInterpreter ref = new ReferenceInterpreter();
        List<String> missing = AllPrimitives.array().stream().filter(p -> !ref.has(p)).map(Primitive::name).toList();
        assertThat(missing).as("array primitives without a reference implementation").isEmpty();
        assertThat(AllPrimitives.array()).hasSizeGreaterThan(40);
    }

    @Test
    void integersWrapAndDivisionByZeroIsAnError() {
        Tensor big = Tensor.of(new int[] {Integer.MAX_VALUE, Integer.MIN_VALUE, 7, -7});
        assertThat(big.add(Tensor.of(new int[] {1, -1, 0, 0})).toIntArray())
                .containsExactly(Integer.MIN_VALUE, Integer.MAX_VALUE, 7, -7);
        assertThat(big.div(Tensor.of(new int[] {1, -1, 2, 2})).toIntArray())
                .containsExactly(Integer.MAX_VALUE, Integer.MIN_VALUE, 3, -3);
        assertThat(big.rem(Tensor.of(new int[] {2, 3, 3, 3})).toIntArray()).containsExactly(1, -2, 1, -1);
        assertThat(Tensor.of(new int[] {3, -2, 2}).pow(Tensor.of(new int[] {4, 3, -1})).toIntArray())
                .containsExactly(81, -8, 0);
        assertThat(Tensor.of(new long[] {(1L << 40) + 1}).mul(Tensor.of(new long[] {1L << 30})).toLongArray())
                .as("2^70 + 2^30 wrapped").containsExactly(1L << 30);
        assertThatThrownBy(() -> big.div(Tensor.of(new int[] {1, 0, 1, 1}))).isInstanceOf(WeftException.class)
                .hasMessageContaining("div: integer division by zero");
    }

    @Test
    void f32ResultsAreRoundedOnceAndCastsAreJavas() {
        Tensor a = Tensor.of(new float[] {0.1f, 1e30f, Float.NaN, -2.5f});
        Tensor b = Tensor.of(new float[] {0.2f, 1e30f, 1, 0.5f});
        assertThat(a.add(b).toFloatArray()).containsExactly(0.1f + 0.2f, 1e30f + 1e30f, Float.NaN, -2.0f);
        assertThat(a.mul(b).toFloatArray()).containsExactly(0.1f * 0.2f, Float.POSITIVE_INFINITY, Float.NaN, -1.25f);
        assertThat(a.cast(DType.I32).toIntArray()).containsExactly(0, Integer.MAX_VALUE, 0, -2);
        assertThat(a.cast(DType.BOOL).toBooleanArray()).containsExactly(true, true, true, true);
        assertThat(Tensor.of(new long[] {(1L << 24) + 1, -3}).cast(DType.F32).toFloatArray())
                .containsExactly(16777216f, -3f);
        assertThat(Tensor.of(new long[] {(1L << 32) + 5}).cast(DType.I32).toIntArray()).containsExactly(5);
        assertThat(Tensor.of(new double[] {1, 2, 3}).lt(Tensor.of(new double[] {2, 2, 2})).toBooleanArray())
                .containsExactly(true, false, false);
    }

    @Test
    void structuralPrimitivesMoveTheRightElements() {
        Tensor x = Tensor.of(new double[] {1, 2, 3, 4, 5, 6}, 2, 3);
        assertThat(x.transpose(1, 0).toDoubleArray()).containsExactly(1, 4, 2, 5, 3, 6);
        assertThat(x.sum(0).toDoubleArray()).containsExactly(5, 7, 9);
        assertThat(x.max(1).toDoubleArray()).containsExactly(3, 6);
        assertThat(x.matmul(Tensor.of(new double[] {1, 0, -1})).toDoubleArray()).containsExactly(-2, -2);
        assertThat(Tensor.of(new double[] {10, 20}, 2, 1).broadcastTo(2, 3).toDoubleArray())
                .containsExactly(10, 10, 10, 20, 20, 20);
        assertThat(x.slice(new long[] {1, 1}, new long[] {2, 3}).toDoubleArray()).containsExactly(5, 6);
        assertThat(x.pad(new long[] {0, 1}, new long[] {1, 0}, -1).toDoubleArray())
                .containsExactly(-1, 1, 2, 3, -1, 4, 5, 6, -1, -1, -1, -1);
        assertThat(Tensor.concat(1, x, Tensor.of(new double[] {7, 8}, 2, 1)).toDoubleArray())
                .containsExactly(1, 2, 3, 7, 4, 5, 6, 8);
        Tensor far = Tensor.scalar(DType.I32, 5), zero = Tensor.scalar(DType.I64, 0);
        assertThat(x.dynamicSlice(List.of(far, far), 1, 2).toDoubleArray()).containsExactly(5, 6);
        assertThat(x.dynamicUpdateSlice(Tensor.of(new double[] {0, 0}, 1, 2), List.of(far, zero)).toDoubleArray())
                .containsExactly(1, 2, 3, 0, 0, 6);
    }
}
