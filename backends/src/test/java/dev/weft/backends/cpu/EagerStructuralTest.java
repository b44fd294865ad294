package dev.weft.backends.cpu;

import static dev.weft.backends.cpu.EagerElementwiseTest.tensor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EagerStructuralTest {
    private static double[] ramp(int n, double scale) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = ((i * 37) % 13 - 6) * scale;
        }
        return v;
    }

    /** Reference batched product on doubles: lhs [b,m,k], rhs [b,k,n]. */
    private static double[] referenceMatmul(double[] a, double[] b, int batch, int m, int k, int n) {
        double[] c = new double[batch * m * n];
        for (int q = 0; q < batch; q++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++) {
                        s += a[(q * m + i) * k + p] * b[(q * k + p) * n + j];
                    }
                    c[(q * m + i) * n + j] = s;
                }
            }
        }
        return c;
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void matmulOfAllRanks(DType t) {
        double[] a = ramp(2 * 5 * 7, 1), b = ramp(2 * 7 * 3, 1);
        assertThat(tensor(t, a, 2, 5, 7).matmul(tensor(t, b, 2, 7, 3)).toDoubleArray())
                .containsExactly(referenceMatmul(a, b, 2, 5, 7, 3));
        double[] a2 = Arrays.copyOf(a, 35), b2 = Arrays.copyOf(b, 21);
        assertThat(tensor(t, a2, 5, 7).matmul(tensor(t, b2, 7, 3)).toDoubleArray())
                .containsExactly(referenceMatmul(a2, b2, 1, 5, 7, 3));
        double[] v = Arrays.copyOf(b, 7);
        Tensor mv = tensor(t, a2, 5, 7).matmul(tensor(t, v, 7));
        assertThat(mv.shape()).containsExactly(5);
        assertThat(mv.toDoubleArray()).containsExactly(referenceMatmul(a2, v, 1, 5, 7, 1));
        double[] u = Arrays.copyOf(a, 7);
        Tensor vm = tensor(t, u, 7).matmul(tensor(t, b2, 7, 3));
        assertThat(vm.shape()).containsExactly(3);
        assertThat(vm.toDoubleArray()).containsExactly(referenceMatmul(u, b2, 1, 1, 7, 3));
        Tensor dot = tensor(t, u, 7).matmul(tensor(t, v, 7));
        assertThat(dot.rank()).isZero();
        assertThat(dot.item()).isEqualTo(referenceMatmul(u, v, 1, 1, 7, 1)[0]);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64"})
    void largeMatmulAcrossBlocksAndThreads(DType t) {
        int m = 67, k = 300, n = 530;
        Random r = new Random(1);
        double[] a = r.doubles(m * k, -1, 1).toArray(), b = r.doubles(k * n, -1, 1).toArray();
        if (t == DType.F32) {
            for (int i = 0; i < a.length; i++) {
                a[i] = (float) a[i];
            }
            for (int i = 0; i < b.length; i++) {
                b[i] = (float) b[i];
            }
        }
        double[] got = tensor(t, a, m, k).matmul(tensor(t, b, k, n)).toDoubleArray();
        double[] want = referenceMatmul(a, b, 1, m, k, n);
        for (int i = 0; i < want.length; i++) {
            assertThat(got[i]).isCloseTo(want[i], within(t == DType.F32 ? 1e-3 : 1e-10));
        }
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void reshapeTransposeBroadcast(DType t) {
        Tensor x = tensor(t, new double[] {0, 1, 2, 3, 4, 5}, 2, 3);
        assertThat(x.reshape(3, -1).shape()).containsExactly(3, 2);
        assertThat(x.reshape(3, 2).toDoubleArray()).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(x.transpose().toDoubleArray()).containsExactly(0, 3, 1, 4, 2, 5);
        Tensor y = tensor(t, ramp(24, 1), 2, 3, 4);
        Tensor p = y.transpose(2, 0, 1);
        assertThat(p.shape()).containsExactly(4, 2, 3);
        double[] yd = y.toDoubleArray(), pd = p.toDoubleArray();
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 2; j++) {
                for (int k = 0; k < 3; k++) {
                    assertThat(pd[(i * 2 + j) * 3 + k]).isEqualTo(yd[(j * 3 + k) * 4 + i]);
                }
            }
        }
        assertThat(tensor(t, new double[] {7, 8}, 2, 1).broadcastTo(2, 3).toDoubleArray())
                .containsExactly(7, 7, 7, 8, 8, 8);
        assertThat(tensor(t, new double[] {7, 8, 9}, 3).broadcastTo(2, 3).toDoubleArray())
                .containsExactly(7, 8, 9, 7, 8, 9);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void sliceConcatPad(DType t) {
        Tensor x = tensor(t, new double[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 4);
        assertThat(x.slice(new long[] {1, 1}, new long[] {3, 3}).toDoubleArray()).containsExactly(5, 6, 9, 10);
        Tensor a = tensor(t, new double[] {1, 2}, 1, 2), b = tensor(t, new double[] {3, 4, 5, 6}, 2, 2);
        assertThat(Tensor.concat(0, a, b).toDoubleArray()).containsExactly(1, 2, 3, 4, 5, 6);
        Tensor c = tensor(t, new double[] {9, 8}, 2, 1);
        assertThat(Tensor.concat(1, b, c).toDoubleArray()).containsExactly(3, 4, 9, 5, 6, 8);
        assertThat(Tensor.concat(-1, b, c).shape()).containsExactly(2, 3);
        assertThat(a.pad(new long[] {1, 0}, new long[] {0, 2}, -1).toDoubleArray())
                .containsExactly(-1, -1, -1, -1, 1, 2, -1, -1);
        assertThat(a.pad(new long[] {0, 1}, new long[] {0, 0}).toDoubleArray()).containsExactly(0, 1, 2);
    }

    @Test
    void boolDataMovement() {
        Tensor x = Tensor.of(new boolean[] {true, false, false, true}, 2, 2);
        assertThat(x.transpose().toBooleanArray()).containsExactly(true, false, false, true);
        assertThat(Tensor.concat(0, x, x).shape()).containsExactly(4, 2);
        assertThat(x.slice(new long[] {0, 1}, new long[] {2, 2}).toBooleanArray()).containsExactly(false, true);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void constructors(DType t) {
        assertThat(Tensor.arange(t, 5).toDoubleArray()).containsExactly(0, 1, 2, 3, 4);
        assertThat(Tensor.arange(t, 5).dtype()).isEqualTo(t);
        assertThat(Tensor.full(t, 3, 2, 2).toDoubleArray()).containsExactly(3, 3, 3, 3);
        assertThat(Tensor.ones(t, 3).sum().item()).isEqualTo(3);
    }

    @Test
    void foriRunsTheBodyWithAnI32Index() {
        Tensor sum = Weft.fori(0, 10, Tensor.zeros(DType.I64, 2), (i, acc) -> {
            assertThat(i.dtype()).isEqualTo(DType.I32);
            return acc.add(i.cast(DType.I64));
        });
        assertThat(sum.toLongArray()).containsExactly(45, 45);
        List<Tensor> two = Weft.fori(1, 4, List.of(Tensor.scalar(DType.F64, 1), Tensor.scalar(DType.F64, 0)),
                (i, c) -> List.of(c.get(0).mul(i.cast(DType.F64)), c.get(1).add(1)));
        assertThat(two.get(0).item()).isEqualTo(6);
        assertThat(two.get(1).item()).isEqualTo(3);
    }

    @Test
    void foriRejectsACarryThatChangesShape() {
        assertThatThrownBy(() -> Weft.fori(0, 2, Tensor.zeros(DType.F32, 2), (i, c) -> c.sum()))
                .isInstanceOf(ShapeException.class);
    }

    @Test
    void condPicksABranch() {
        Tensor x = Tensor.of(new double[] {2});
        assertThat(Weft.cond(x.sum().gt(1), () -> x.mul(10), () -> x.neg()).toDoubleArray()).containsExactly(20);
        assertThat(Weft.cond(x.sum().lt(1), () -> x.mul(10), () -> x.neg()).toDoubleArray()).containsExactly(-2);
    }

    @Test
    void condNeedsABoolScalar() {
        Tensor x = Tensor.of(new double[] {2});
        assertThatThrownBy(() -> Weft.cond(x.sum(), () -> x, () -> x)).isInstanceOf(DTypeException.class);
        assertThatThrownBy(() -> Weft.cond(x.gt(1), () -> x, () -> x)).isInstanceOf(ShapeException.class);
    }
}
