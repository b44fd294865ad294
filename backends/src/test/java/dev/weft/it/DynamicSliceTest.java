package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** {@code dynamicSlice} and {@code dynamicUpdateSlice}: compiled equals eager equals a plain Java reference. */
class DynamicSliceTest {
    private static final long[] SHAPE = {4, 5};

    @Compile
    static Tensor slice(Tensor x, Tensor i, Tensor j) {
        return x.dynamicSlice(List.of(i, j), 2, 3);
    }

    @Compile
    static Tensor update(Tensor x, Tensor u, Tensor i, Tensor j) {
        return x.dynamicUpdateSlice(u, List.of(i, j));
    }

    /** Row {@code i} of a 4×5 tensor as a double, and the reference of a clamped block. */
    private static double[] values(int n) {
        double[] v = new double[n];
        for (int k = 0; k < n; k++) {
            v[k] = k % 7 + 1;
        }
        return v;
    }

    private static Tensor make(DType t, double[] v, long... shape) {
        return Tensor.of(v, shape).cast(t);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64", "BOOL"})
    void blocksAtRunTimeStartsAreClampedLikeXla(DType t) {
        double[] v = values(20);
        Tensor x = make(t, v, SHAPE);
        double[] uv = {9, 8, 7, 6, 5, 4};
        Tensor u = make(t, uv, 2, 3);
        int[][] starts = {{0, 0}, {1, 2}, {3, 4}, {-2, 1}, {9, -9}};
        for (int[] s : starts) {
            for (DType index : List.of(DType.I32, DType.I64)) {
                Tensor i = Tensor.scalar(index, s[0]), j = Tensor.scalar(index, s[1]);
                int ci = Math.clamp(s[0], 0, 2), cj = Math.clamp(s[1], 0, 2);
                double[] want = new double[6];
                for (int a = 0; a < 2; a++) {
                    for (int b = 0; b < 3; b++) {
                        want[a * 3 + b] = v[(ci + a) * 5 + cj + b];
                    }
                }
                Tensor eager = x.dynamicSlice(List.of(i, j), 2, 3);
                Tensor compiled = slice(x, i, j);
                assertThat(compiled.shape()).containsExactly(2, 3);
                assertThat(compiled.cast(DType.F64).toDoubleArray()).as("slice at %d,%d", s[0], s[1])
                        .containsExactly(make(t, want, 2, 3).cast(DType.F64).toDoubleArray());
                assertThat(eager.cast(DType.F64).toDoubleArray()).containsExactly(
                        compiled.cast(DType.F64).toDoubleArray());

                double[] updated = v.clone();
                for (int a = 0; a < 2; a++) {
                    for (int b = 0; b < 3; b++) {
                        updated[(ci + a) * 5 + cj + b] = uv[a * 3 + b];
                    }
                }
                Tensor ue = x.dynamicUpdateSlice(u, List.of(i, j));
                Tensor uc = update(x, u, i, j);
                assertThat(uc.cast(DType.F64).toDoubleArray()).as("update at %d,%d", s[0], s[1])
                        .containsExactly(make(t, updated, SHAPE).cast(DType.F64).toDoubleArray());
                assertThat(ue.cast(DType.F64).toDoubleArray()).containsExactly(uc.cast(DType.F64).toDoubleArray());
            }
        }
        assertThat(x.cast(DType.F64).toDoubleArray()).as("the operand is unchanged")
                .containsExactly(make(t, v, SHAPE).cast(DType.F64).toDoubleArray());
    }

    /** Row i of the result is f(row i of x) and row i of the running sum: a loop reading and updating its carry. */
    @Compile
    static List<Tensor> rows(Tensor x) {
        int n = (int) x.shape()[0];
        return Weft.fori(0, n, List.of(Tensor.zeros(x.dtype(), x.shape()), Tensor.zeros(x.dtype(), x.shape()[1])),
                (i, c) -> {
                    Tensor row = x.dynamicSlice(List.of(i, Tensor.scalar(DType.I32, 0)), 1, x.shape()[1])
                            .reshape(x.shape()[1]);
                    Tensor sum = c.get(1).add(row.mul(row));
                    Tensor out = c.get(0).dynamicUpdateSlice(sum.reshape(1, x.shape()[1]),
                            List.of(i, Tensor.scalar(DType.I32, 0)));
                    return List.of(out, sum);
                });
    }

    @Test
    void aLoopFillsItsCarryRowByRow() {
        int n = 300, k = 7;
        double[] v = new double[n * k];
        for (int a = 0; a < v.length; a++) {
            v[a] = Math.sin(a);
        }
        Tensor x = Tensor.of(v, n, k);
        double[] want = new double[n * k], run = new double[k];
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < k; b++) {
                run[b] += v[a * k + b] * v[a * k + b];
                want[a * k + b] = run[b];
            }
        }
        List<Tensor> compiled = rows(x);
        assertThat(compiled.get(0).toDoubleArray()).containsExactly(want);
        assertThat(compiled.get(1).toDoubleArray()).containsExactly(run);
        List<Tensor> eager = Weft.fori(0, n, List.of(Tensor.zeros(DType.F64, n, k), Tensor.zeros(DType.F64, k)),
                (i, c) -> {
                    Tensor row = x.dynamicSlice(List.of(i, Tensor.scalar(DType.I32, 0)), 1, k).reshape(k);
                    Tensor sum = c.get(1).add(row.mul(row));
                    return List.of(c.get(0).dynamicUpdateSlice(sum.reshape(1, k), List.of(i,
                            Tensor.scalar(DType.I32, 0))), sum);
                });
        assertThat(eager.get(0).toDoubleArray()).containsExactly(want);
    }

    @Test
    void wrongStartsNameTheLine() {
        Tensor x = Tensor.zeros(DType.F32, 4, 5);
        assertThatThrownBy(() -> x.dynamicSlice(List.of(Tensor.scalar(DType.I32, 0)), 1, 1))
                .isInstanceOf(ShapeException.class).hasMessageStartingWith("DynamicSliceTest.java:")
                .hasMessageContaining("1 start indices");
        assertThatThrownBy(() -> x.dynamicSlice(List.of(Tensor.scalar(DType.F32, 0), Tensor.scalar(DType.I32, 0)),
                1, 1)).isInstanceOf(ShapeException.class).hasMessageContaining("i32 or i64 scalars");
        assertThatThrownBy(() -> x.dynamicSlice(List.of(Tensor.scalar(DType.I32, 0), Tensor.scalar(DType.I32, 0)),
                5, 1)).isInstanceOf(ShapeException.class).hasMessageContaining("does not fit");
        assertThatThrownBy(() -> x.dynamicUpdateSlice(Tensor.zeros(DType.F64, 1, 1),
                List.of(Tensor.scalar(DType.I32, 0), Tensor.scalar(DType.I32, 0))))
                .hasMessageContaining("dynamic_update_slice");
    }
}
