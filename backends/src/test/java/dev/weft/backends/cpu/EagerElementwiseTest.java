package dev.weft.backends.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import java.util.Arrays;
import java.util.function.BinaryOperator;
import java.util.function.DoubleBinaryOperator;
import java.util.function.DoubleUnaryOperator;
import java.util.function.LongBinaryOperator;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EagerElementwiseTest {
    /** Shape [2,3]; combined with B (shape [3]) by broadcasting. No zero in B, so integer division is defined. */
    private static final double[] A = {-7, -1, 1, 2, 5, 3};
    private static final double[] B = {2, -3, 3};

    static Tensor tensor(DType t, double[] v, long... shape) {
        return Tensor.zeros(t, shape).add(switch (t) {
            case F32 -> {
                float[] f = new float[v.length];
                for (int i = 0; i < v.length; i++) {
                    f[i] = (float) v[i];
                }
                yield Tensor.of(f, shape);
            }
            case F64 -> Tensor.of(v, shape);
            case I32 -> Tensor.of(Arrays.stream(v).mapToInt(d -> (int) d).toArray(), shape);
            case I64 -> Tensor.of(Arrays.stream(v).mapToLong(d -> (long) d).toArray(), shape);
            case BOOL -> throw new IllegalArgumentException();
        });
    }

    /** Reference pow by repeated multiplication (not squaring). */
    private static long slowPow(long base, long exp) {
        if (exp < 0) {
            return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
        }
        long r = 1;
        for (long i = 0; i < exp; i++) {
            r *= base;
        }
        return r;
    }

    private static void checkBinary(DType t, BinaryOperator<Tensor> op, DoubleBinaryOperator fp,
                                    LongBinaryOperator integer) {
        Tensor out = op.apply(tensor(t, A, 2, 3), tensor(t, B, 3));
        assertThat(out.dtype()).isEqualTo(t);
        assertThat(out.shape()).containsExactly(2, 3);
        double[] got = out.toDoubleArray();
        for (int i = 0; i < 6; i++) {
            double a = A[i], b = B[i % 3];
            double want = switch (t) {
                case F32 -> (float) fp.applyAsDouble((float) a, (float) b);
                case F64 -> fp.applyAsDouble(a, b);
                default -> integer.applyAsLong((long) a, (long) b);
            };
            assertThat(got[i]).as("%s element %d", t, i).isCloseTo(want, within(Math.abs(want) * 1e-6));
        }
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void arithmeticBroadcastsAndMatchesReference(DType t) {
        checkBinary(t, Tensor::add, (a, b) -> a + b, (a, b) -> a + b);
        checkBinary(t, Tensor::sub, (a, b) -> a - b, (a, b) -> a - b);
        checkBinary(t, Tensor::mul, (a, b) -> a * b, (a, b) -> a * b);
        checkBinary(t, Tensor::div, (a, b) -> a / b, (a, b) -> a / b);
        checkBinary(t, Tensor::pow, Math::pow, EagerElementwiseTest::slowPow);
        checkBinary(t, Tensor::maximum, Math::max, Math::max);
        checkBinary(t, Tensor::minimum, Math::min, Math::min);
        checkBinary(t, Tensor::rem, (a, b) -> a % b, (a, b) -> a % b);
    }

    @Test
    void integerDivisionTruncatesTowardZero() {
        assertThat(Tensor.of(new int[] {-7, 7, -7, 7}).div(Tensor.of(new int[] {2, -2, -2, 2})).toIntArray())
                .containsExactly(-3, -3, 3, 3);
        assertThat(Tensor.of(new long[] {-7, 7, -7, 7}).rem(Tensor.of(new long[] {2, -2, -2, 2})).toLongArray())
                .containsExactly(-1, 1, -1, 1);
        assertThat(Tensor.of(new float[] {-7.5f}).rem(2).toFloatArray()).containsExactly(-1.5f);
    }

    @Test
    void integerPowerBySquaringWithNegativeExponents() {
        assertThat(Tensor.of(new int[] {2, 2, -1, -1, 1, 3, 0}).pow(Tensor.of(new int[] {10, -1, -3, -4, -5, 19, 0}))
                .toIntArray()).containsExactly(1024, 0, -1, 1, 1, 1162261467, 1);
        assertThat(Tensor.of(new long[] {3}).pow(39).toLongArray()).containsExactly(4052555153018976267L);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"I32", "I64"})
    void integerDivisionByZeroIsAnError(DType t) {
        Tensor a = tensor(t, new double[] {1, 2}, 2), z = tensor(t, new double[] {1, 0}, 2);
        assertThatThrownBy(() -> a.div(z)).isInstanceOf(WeftException.class)
                .hasMessageContaining("integer division by zero");
        assertThatThrownBy(() -> a.rem(z)).isInstanceOf(WeftException.class)
                .hasMessageContaining("integer division by zero");
    }

    @Test
    void floatDivisionByZeroGivesInfinity() {
        assertThat(Tensor.of(new double[] {1, -1}).div(0).toDoubleArray())
                .containsExactly(Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY);
    }

    @Test
    void maxAndMinPropagateNaN() {
        Tensor a = Tensor.of(new float[] {Float.NaN, 1}), b = Tensor.of(new float[] {1, Float.NaN});
        assertThat(a.maximum(b).toFloatArray()).containsExactly(Float.NaN, Float.NaN);
        assertThat(a.minimum(b).toFloatArray()).containsExactly(Float.NaN, Float.NaN);
    }

    private static void checkUnary(DType t, UnaryOperator<Tensor> op, DoubleUnaryOperator ref) {
        double[] x = {0.25, 0.5, 1, 2, 3.5, 7};
        double[] got = op.apply(tensor(t, x, 2, 3)).toDoubleArray();
        for (int i = 0; i < x.length; i++) {
            double want = t == DType.F32 ? (float) ref.applyAsDouble((float) x[i]) : ref.applyAsDouble(x[i]);
            assertThat(got[i]).as("%s(%s)", t, x[i]).isCloseTo(want, within(1e-12));
        }
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64"})
    void floatingUnaryOps(DType t) {
        checkUnary(t, Tensor::neg, v -> -v);
        checkUnary(t, Tensor::abs, Math::abs);
        checkUnary(t, Tensor::exp, Math::exp);
        checkUnary(t, Tensor::log, Math::log);
        checkUnary(t, Tensor::sqrt, Math::sqrt);
        checkUnary(t, Tensor::rsqrt, v -> 1 / Math.sqrt(v));
        checkUnary(t, Tensor::tanh, Math::tanh);
        checkUnary(t, Tensor::sin, Math::sin);
        checkUnary(t, Tensor::cos, Math::cos);
        checkUnary(t, x -> x.neg().abs(), Math::abs);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"I32", "I64"})
    void integerUnaryOps(DType t) {
        Tensor x = tensor(t, new double[] {-3, 0, 4}, 3);
        assertThat(x.neg().toLongArray()).containsExactly(3, 0, -4);
        assertThat(x.abs().toLongArray()).containsExactly(3, 0, 4);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void comparisonsGiveBool(DType t) {
        Tensor a = tensor(t, new double[] {1, 2, 3}, 3), b = tensor(t, new double[] {2, 2, 2}, 3);
        assertThat(a.lt(b).dtype()).isEqualTo(DType.BOOL);
        assertThat(a.lt(b).toBooleanArray()).containsExactly(true, false, false);
        assertThat(a.le(b).toBooleanArray()).containsExactly(true, true, false);
        assertThat(a.gt(b).toBooleanArray()).containsExactly(false, false, true);
        assertThat(a.ge(b).toBooleanArray()).containsExactly(false, true, true);
        assertThat(a.eq(b).toBooleanArray()).containsExactly(false, true, false);
        assertThat(a.ne(b).toBooleanArray()).containsExactly(true, false, true);
        assertThat(tensor(t, new double[] {1, 2, 3, 4, 5, 6}, 2, 3).gt(2).toBooleanArray())
                .containsExactly(false, false, true, true, true, true);
    }

    @Test
    void comparisonsWithNaNAreFalseExceptNe() {
        Tensor nan = Tensor.of(new double[] {Double.NaN}), one = Tensor.of(new double[] {1});
        assertThat(nan.lt(one).toBooleanArray()).containsExactly(false);
        assertThat(nan.ge(one).toBooleanArray()).containsExactly(false);
        assertThat(nan.eq(nan).toBooleanArray()).containsExactly(false);
        assertThat(nan.ne(nan).toBooleanArray()).containsExactly(true);
    }

    @Test
    void boolComparisons() {
        Tensor a = Tensor.of(new boolean[] {true, true, false}), b = Tensor.of(new boolean[] {true, false, false});
        assertThat(a.eq(b).toBooleanArray()).containsExactly(true, false, true);
        assertThat(a.ne(b).toBooleanArray()).containsExactly(false, true, false);
        assertThat(a.gt(b).toBooleanArray()).containsExactly(false, true, false);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void whereBroadcastsAllThree(DType t) {
        Tensor cond = Tensor.of(new boolean[] {true, false, true}, 3);
        Tensor a = tensor(t, new double[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor b = tensor(t, new double[] {-1}, 1);
        assertThat(Tensor.where(cond, a, b).toDoubleArray()).containsExactly(1, -1, 3, 4, -1, 6);
    }

    @Test
    void whereOnBool() {
        Tensor c = Tensor.of(new boolean[] {true, false});
        Tensor r = Tensor.where(c, Tensor.of(new boolean[] {false, false}), Tensor.of(new boolean[] {true, true}));
        assertThat(r.toBooleanArray()).containsExactly(false, true);
    }

    @Test
    void castBetweenAllDtypes() {
        Tensor x = Tensor.of(new double[] {-2.7, 0, 1.5, 3e10, Double.NaN});
        assertThat(x.cast(DType.I32).toIntArray()).containsExactly(-2, 0, 1, Integer.MAX_VALUE, 0);
        assertThat(x.cast(DType.I64).toLongArray()).containsExactly(-2, 0, 1, 30_000_000_000L, 0);
        assertThat(x.cast(DType.BOOL).toBooleanArray()).containsExactly(true, false, true, true, true);
        assertThat(x.cast(DType.F32).toFloatArray()).containsExactly(-2.7f, 0f, 1.5f, 3e10f, Float.NaN);
        Tensor big = Tensor.of(new long[] {(1L << 32) + 5, -1});
        assertThat(big.cast(DType.I32).toIntArray()).containsExactly(5, -1);
        assertThat(big.cast(DType.F64).toDoubleArray()).containsExactly(4294967301.0, -1);
        Tensor bools = Tensor.of(new boolean[] {true, false});
        for (DType t : new DType[] {DType.F32, DType.F64, DType.I32, DType.I64}) {
            assertThat(bools.cast(t).toDoubleArray()).as("bool to %s", t).containsExactly(1, 0);
            assertThat(bools.cast(t).cast(DType.BOOL).toBooleanArray()).containsExactly(true, false);
        }
        Tensor f = Tensor.of(new float[] {-1.9f, 2.9f});
        assertThat(f.cast(DType.I64).toLongArray()).containsExactly(-1, 2);
        assertThat(f.cast(DType.F64).toDoubleArray()).containsExactly((double) -1.9f, (double) 2.9f);
        assertThat(Tensor.of(new int[] {7, -8}).cast(DType.F32).toFloatArray()).containsExactly(7f, -8f);
        assertThat(Tensor.of(new int[] {7, -8}).cast(DType.I64).toLongArray()).containsExactly(7, -8);
    }

    @Test
    void scalarOverloadsTakeTheTensorsDtype() {
        assertThat(Tensor.of(new int[] {1, 2}).mul(3).add(1).toIntArray()).containsExactly(4, 7);
        assertThat(Tensor.of(new float[] {1, 2}).sub(0.5).div(2).toFloatArray()).containsExactly(0.25f, 0.75f);
        assertThat(Tensor.of(new double[] {1, 5}).maximum(2).minimum(4).toDoubleArray()).containsExactly(2, 4);
    }
}
