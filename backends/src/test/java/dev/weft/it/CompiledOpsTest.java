package dev.weft.it;

import static dev.weft.it.Ref.assertExact;
import static dev.weft.it.Ref.assertUlps;
import static dev.weft.it.Ref.make;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleUnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every {@link Tensor} operation compiled equals the same operation run eagerly (exactly: the executor and the
 * eager interpreter share kernels and evaluation order), and equals a reference computed here with plain loops
 * (exactly for exact operations; within 2 ulp for exp, log, tanh, sin, cos, rsqrt and float pow, and a
 * relative 1e-12 (F64) / 1e-5 (F32) for float sums and products, whose association order is the kernel's).
 */
class CompiledOpsTest {
    private static final String[] BINARY = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "rem"};
    private static final String[] COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"};
    private static final long[][][] BROADCAST = {
        {{2, 3}, {3}}, {{4, 1}, {1, 5}}, {{}, {2, 2}}, {{5}, {5}}, {{2, 1, 3}, {4, 1}},
    };

    @BeforeAll
    static void install() {
        Weft.install();
    }

    static Tensor binaryBody(String op, Tensor a, Tensor b) {
        return switch (op) {
            case "add" -> a.add(b);
            case "sub" -> a.sub(b);
            case "mul" -> a.mul(b);
            case "div" -> a.div(b);
            case "pow" -> a.pow(b);
            case "maximum" -> a.maximum(b);
            case "minimum" -> a.minimum(b);
            case "rem" -> a.rem(b);
            case "lt" -> a.lt(b);
            case "le" -> a.le(b);
            case "gt" -> a.gt(b);
            case "ge" -> a.ge(b);
            case "eq" -> a.eq(b);
            case "ne" -> a.ne(b);
            default -> throw new IllegalArgumentException(op);
        };
    }

    @Compile
    static Tensor binary(String op, Tensor a, Tensor b) {
        return binaryBody(op, a, b);
    }

    static Tensor scalarBody(String op, Tensor a, double s) {
        return switch (op) {
            case "add" -> a.add(s);
            case "sub" -> a.sub(s);
            case "mul" -> a.mul(s);
            case "div" -> a.div(s);
            case "pow" -> a.pow(s);
            case "maximum" -> a.maximum(s);
            case "minimum" -> a.minimum(s);
            case "rem" -> a.rem(s);
            case "lt" -> a.lt(s);
            case "le" -> a.le(s);
            case "gt" -> a.gt(s);
            case "ge" -> a.ge(s);
            case "eq" -> a.eq(s);
            case "ne" -> a.ne(s);
            default -> throw new IllegalArgumentException(op);
        };
    }

    @Compile
    static Tensor scalar(String op, Tensor a, double s) {
        return scalarBody(op, a, s);
    }

    static Tensor unaryBody(String op, Tensor a) {
        return switch (op) {
            case "neg" -> a.neg();
            case "abs" -> a.abs();
            case "exp" -> a.exp();
            case "log" -> a.log();
            case "sqrt" -> a.sqrt();
            case "rsqrt" -> a.rsqrt();
            case "tanh" -> a.tanh();
            case "sin" -> a.sin();
            case "cos" -> a.cos();
            default -> throw new IllegalArgumentException(op);
        };
    }

    @Compile
    static Tensor unary(String op, Tensor a) {
        return unaryBody(op, a);
    }

    static Stream<Arguments> binaryCases() {
        List<Arguments> out = new ArrayList<>();
        for (DType t : List.of(DType.F32, DType.F64, DType.I32, DType.I64)) {
            for (String op : BINARY) {
                for (long[][] s : BROADCAST) {
                    out.add(Arguments.of(t, op, s[0], s[1]));
                }
            }
            for (String op : COMPARE) {
                for (long[][] s : BROADCAST) {
                    out.add(Arguments.of(t, op, s[0], s[1]));
                }
            }
        }
        return out.stream();
    }

    private static double fp(String op, double a, double b) {
        return switch (op) {
            case "add" -> a + b;
            case "sub" -> a - b;
            case "mul" -> a * b;
            case "div" -> a / b;
            case "pow" -> Math.pow(a, b);
            case "maximum" -> Math.max(a, b);
            case "minimum" -> Math.min(a, b);
            case "rem" -> a % b;
            default -> compare(op, a, b);
        };
    }

    private static double integer(String op, long a, long b) {
        return switch (op) {
            case "add" -> a + b;
            case "sub" -> a - b;
            case "mul" -> a * b;
            case "div" -> a / b;
            case "pow" -> {
                long r = 1;
                for (long i = 0; i < b; i++) {
                    r *= a;
                }
                yield r;
            }
            case "maximum" -> Math.max(a, b);
            case "minimum" -> Math.min(a, b);
            case "rem" -> a % b;
            default -> compare(op, a, b);
        };
    }

    private static double compare(String op, double a, double b) {
        boolean r = switch (op) {
            case "lt" -> a < b;
            case "le" -> a <= b;
            case "gt" -> a > b;
            case "ge" -> a >= b;
            case "eq" -> a == b;
            case "ne" -> a != b;
            default -> throw new IllegalArgumentException(op);
        };
        return r ? 1 : 0;
    }

    /** Operands for {@code op}: a positive base for float pow, a small non-negative exponent for integer pow, no zero divisor. */
    private static double[][] operands(Random rnd, DType t, String op, long na, long nb) {
        double[] a = Ref.values(rnd, t, na, 5);
        double[] b = Ref.values(rnd, t, nb, 4);
        for (int i = 0; i < b.length; i++) {
            if (op.equals("pow")) {
                b[i] = t.isFloating() ? b[i] / 2 : Math.abs(b[i]) % 4;
            } else if (b[i] == 0 && (op.equals("div") || op.equals("rem"))) {
                b[i] = 3;
            }
        }
        if (op.equals("pow") && t.isFloating()) {
            for (int i = 0; i < a.length; i++) {
                a[i] = Math.abs(a[i]) + 0.25;
            }
        }
        return new double[][] {a, b};
    }

    @ParameterizedTest(name = "{0} {1} {2} {3}")
    @MethodSource("binaryCases")
    void binaryAndComparisonOpsBroadcast(DType t, String op, long[] sa, long[] sb) {
        Random rnd = new Random(op.hashCode() * 31L + sa.length * 7L + sb.length + t.ordinal());
        double[][] ab = operands(rnd, t, op, Ref.size(sa), Ref.size(sb));
        Tensor a = make(t, ab[0], sa), b = make(t, ab[1], sb);
        Tensor eager = binaryBody(op, a, b);
        Tensor compiled = binary(op, a, b);
        assertExact(op, compiled, eager);

        long[] out = Ref.broadcastShape(sa, sb);
        double[] xa = Ref.broadcast(ab[0], sa, out), xb = Ref.broadcast(ab[1], sb, out);
        double[] want = new double[xa.length];
        boolean comparison = List.of(COMPARE).contains(op);
        for (int i = 0; i < want.length; i++) {
            want[i] = t.isFloating() ? fp(op, xa[i], xb[i]) : integer(op, (long) xa[i], (long) xb[i]);
        }
        assertUlps(op + " vs reference", compiled, comparison ? DType.BOOL : t, out, want, op.equals("pow") ? 2 : 0);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("binaryCases")
    void scalarOperandsAreWeaklyTyped(DType t, String op, long[] sa, long[] unused) {
        Random rnd = new Random(op.hashCode() + 17L * sa.length + t.ordinal());
        double[][] ab = operands(rnd, t, op, Ref.size(sa), 1);
        double s = ab[1][0];
        Tensor a = make(t, ab[0], sa);
        Tensor compiled = scalar(op, a, s);
        assertExact(op + " scalar", compiled, scalarBody(op, a, s));
        double[] want = new double[ab[0].length];
        for (int i = 0; i < want.length; i++) {
            want[i] = t.isFloating() ? fp(op, ab[0][i], s) : integer(op, (long) ab[0][i], (long) s);
        }
        boolean comparison = List.of(COMPARE).contains(op);
        assertUlps(op + " scalar vs reference", compiled, comparison ? DType.BOOL : t, sa, want,
                op.equals("pow") ? 2 : 0);
    }

    static Stream<Arguments> unaryCases() {
        List<Arguments> out = new ArrayList<>();
        for (DType t : DType.values()) {
            if (t == DType.BOOL) {
                continue;
            }
            for (String op : List.of("neg", "abs")) {
                out.add(Arguments.of(t, op));
            }
            if (t.isFloating()) {
                for (String op : List.of("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos")) {
                    out.add(Arguments.of(t, op));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("unaryCases")
    void unaryOps(DType t, String op) {
        DoubleUnaryOperator ref = switch (op) {
            case "neg" -> v -> -v;
            case "abs" -> Math::abs;
            case "exp" -> Math::exp;
            case "log" -> Math::log;
            case "sqrt" -> Math::sqrt;
            case "rsqrt" -> v -> 1 / Math.sqrt(v);
            case "tanh" -> Math::tanh;
            case "sin" -> Math::sin;
            case "cos" -> Math::cos;
            default -> throw new IllegalArgumentException(op);
        };
        boolean positive = List.of("log", "sqrt", "rsqrt").contains(op);
        for (long[] shape : new long[][] {{}, {7}, {3, 4}, {2, 3, 2}}) {
            double[] v = Ref.values(new Random(op.hashCode() + shape.length), t, Ref.size(shape), 6);
            if (positive) {
                for (int i = 0; i < v.length; i++) {
                    v[i] = Math.abs(v[i]) + 0.5;
                }
            }
            Tensor a = make(t, v, shape);
            Tensor compiled = unary(op, a);
            assertExact(op, compiled, unaryBody(op, a));
            double[] want = new double[v.length];
            for (int i = 0; i < v.length; i++) {
                want[i] = ref.applyAsDouble(v[i]);
            }
            boolean exact = List.of("neg", "abs", "sqrt").contains(op);
            assertUlps(op + " vs reference", compiled, t, shape, want, exact ? 0 : 2);
        }
    }

    @Compile
    static Tensor select(Tensor c, Tensor a, Tensor b) {
        return Tensor.where(c, a, b);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64", "BOOL"})
    void whereBroadcastsAllThreeOperands(DType t) {
        double[] c = {1, 0, 0, 1, 1, 0};
        double[] a = {1, 0, 1}, b = {0};
        Tensor cond = make(DType.BOOL, c, 2, 3), ta = make(t, a, 3), tb = make(t, b);
        Tensor compiled = select(cond, ta, tb);
        assertExact("where", compiled, Tensor.where(cond, ta, tb));
        double[] want = new double[6];
        for (int i = 0; i < 6; i++) {
            want[i] = c[i] != 0 ? a[i % 3] : b[0];
        }
        assertUlps("where vs reference", compiled, t, new long[] {2, 3}, want, 0);
    }

    @Compile
    static Tensor cast(Tensor a, DType to) {
        return a.cast(to);
    }

    @Test
    void castBetweenAllDtypes() {
        double[] v = {-2.75, -1, -0.5, 0, 0.25, 1, 3.5, 7};
        for (DType from : DType.values()) {
            double[] src = new double[v.length];
            for (int i = 0; i < v.length; i++) {
                src[i] = from.isFloating() ? v[i] : from == DType.BOOL ? (v[i] != 0 ? 1 : 0) : (long) v[i];
            }
            Tensor a = make(from, src, 2, 4);
            for (DType to : DType.values()) {
                Tensor compiled = cast(a, to);
                assertExact(from + "->" + to, compiled, a.cast(to));
                double[] want = new double[v.length];
                for (int i = 0; i < v.length; i++) {
                    want[i] = to == DType.BOOL ? (src[i] != 0 ? 1 : 0) : to.isFloating() ? src[i] : (long) src[i];
                }
                assertUlps(from + "->" + to + " vs reference", compiled, to, new long[] {2, 4}, want, 0);
            }
        }
    }

    static Tensor reduceBody(String op, Tensor a, int[] axes) {
        return switch (op) {
            case "sum" -> a.sum(axes);
            case "mean" -> a.mean(axes);
            case "max" -> a.max(axes);
            case "min" -> a.min(axes);
            case "prod" -> a.prod(axes);
            default -> throw new IllegalArgumentException(op);
        };
    }

    /** Axes travel as a string constant ("" for all axes, else comma-separated). */
    @Compile
    static Tensor reduce(String op, Tensor a, String axes) {
        return reduceBody(op, a, parseAxes(axes));
    }

    static int[] parseAxes(String axes) {
        return axes.isEmpty() ? new int[0] : Stream.of(axes.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    static Stream<Arguments> reductionCases() {
        List<Arguments> out = new ArrayList<>();
        for (DType t : List.of(DType.F32, DType.F64, DType.I32, DType.I64)) {
            for (String op : List.of("sum", "mean", "max", "min", "prod")) {
                if (op.equals("mean") && !t.isFloating()) {
                    continue;
                }
                for (String axes : List.of("", "0", "1", "-1", "0,2", "-3,-1", "2,1,0")) {
                    out.add(Arguments.of(t, op, axes));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} axes=[{2}]")
    @MethodSource("reductionCases")
    void reductionsOverAxes(DType t, String op, String axesText) {
        long[] shape = {2, 3, 4};
        double[] v = Ref.values(new Random(op.hashCode() + axesText.hashCode()), t, 24, 3);
        if (op.equals("prod") && t.isFloating()) {
            for (int i = 0; i < v.length; i++) {
                v[i] = v[i] / 2 + (v[i] >= 0 ? 0.5 : -0.5);
            }
        }
        Tensor a = make(t, v, shape);
        int[] axes = parseAxes(axesText);
        Tensor compiled = reduce(op, a, axesText);
        assertExact(op, compiled, reduceBody(op, a, axes));

        boolean[] reduced = new boolean[3];
        for (int ax : axes) {
            reduced[ax < 0 ? ax + 3 : ax] = true;
        }
        if (axes.length == 0) {
            reduced = new boolean[] {true, true, true};
        }
        List<Long> outDims = new ArrayList<>();
        for (int d = 0; d < 3; d++) {
            if (!reduced[d]) {
                outDims.add(shape[d]);
            }
        }
        long[] outShape = outDims.stream().mapToLong(Long::longValue).toArray();
        double[] acc = new double[(int) Ref.size(outShape)];
        long[] count = new long[acc.length];
        Arrays.fill(acc, switch (op) {
            case "max" -> Double.NEGATIVE_INFINITY;
            case "min" -> Double.POSITIVE_INFINITY;
            case "prod" -> 1;
            default -> 0;
        });
        for (int f = 0; f < v.length; f++) {
            long[] idx = Ref.unravel(f, shape);
            long[] o = new long[outShape.length];
            for (int d = 0, k = 0; d < 3; d++) {
                if (!reduced[d]) {
                    o[k++] = idx[d];
                }
            }
            int j = (int) Ref.ravel(o, outShape);
            count[j]++;
            acc[j] = switch (op) {
                case "max" -> Math.max(acc[j], v[f]);
                case "min" -> Math.min(acc[j], v[f]);
                case "prod" -> acc[j] * v[f];
                default -> acc[j] + v[f];
            };
        }
        if (op.equals("mean")) {
            for (int j = 0; j < acc.length; j++) {
                acc[j] /= count[j];
            }
        }
        if (t.isFloating() && !op.equals("max") && !op.equals("min")) {
            double[] got = compiled.toDoubleArray();
            double rel = t == DType.F32 ? 1e-5 : 1e-12;
            for (int j = 0; j < acc.length; j++) {
                assertThat(got[j]).as("%s[%d]", op, j)
                        .isCloseTo(acc[j], within(rel * (1 + Math.abs(acc[j]))));
            }
            assertThat(compiled.shape()).containsExactly(outShape);
        } else {
            assertUlps(op + " vs reference", compiled, t, outShape, acc, 0);
        }
    }

    @Compile
    static Tensor matmul(Tensor a, Tensor b) {
        return a.matmul(b);
    }

    static Stream<Arguments> matmulCases() {
        List<Arguments> out = new ArrayList<>();
        long[][][] shapes = {{{4}, {4}}, {{3, 4}, {4}}, {{4}, {4, 5}}, {{3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}},
            {{1, 1}, {1, 1}}};
        for (DType t : List.of(DType.F32, DType.F64, DType.I32, DType.I64)) {
            for (long[][] s : shapes) {
                out.add(Arguments.of(t, s[0], s[1]));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} @ {2}")
    @MethodSource("matmulCases")
    void matmulOneTwoAndBatched(DType t, long[] sa, long[] sb) {
        Random rnd = new Random(sa.length * 10L + sb.length + t.ordinal());
        double[] va = Ref.values(rnd, t, Ref.size(sa), 4), vb = Ref.values(rnd, t, Ref.size(sb), 4);
        Tensor a = make(t, va, sa), b = make(t, vb, sb);
        Tensor compiled = matmul(a, b);
        assertExact("matmul", compiled, a.matmul(b));

        long[] ma = sa.length == 1 ? new long[] {1, sa[0]} : sa;
        long[] mb = sb.length == 1 ? new long[] {sb[0], 1} : sb;
        long batch = ma.length == 3 ? ma[0] : 1;
        long m = ma[ma.length - 2], k = ma[ma.length - 1], n = mb[mb.length - 1];
        double[] want = new double[(int) (batch * m * n)];
        for (int bi = 0; bi < batch; bi++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++) {
                        s += va[(int) (bi * m * k + i * k + p)] * vb[(int) (bi * k * n + p * n + j)];
                    }
                    want[(int) (bi * m * n + i * n + j)] = s;
                }
            }
        }
        List<Long> outShape = new ArrayList<>();
        if (sa.length == 3) {
            outShape.add(batch);
        }
        if (sa.length >= 2) {
            outShape.add(m);
        }
        if (sb.length >= 2) {
            outShape.add(n);
        }
        assertUlps("matmul vs reference", compiled, t, outShape.stream().mapToLong(Long::longValue).toArray(),
                want, 0);
    }

    static Tensor structBody(String op, Tensor a, Tensor b) {
        return switch (op) {
            case "reshape" -> a.reshape(4, -1);
            case "reshapeFlat" -> a.reshape(-1);
            case "transpose" -> a.transpose(2, 0, 1);
            case "transposeReverse" -> a.transpose();
            case "broadcastTo" -> a.slice(new long[] {0, 0, 0}, new long[] {1, 3, 1}).reshape(3, 1)
                    .broadcastTo(2, 3, 5);
            case "slice" -> a.slice(new long[] {1, 1, 0}, new long[] {2, 3, 2});
            case "concat0" -> Tensor.concat(0, a, b);
            case "concatLast" -> Tensor.concat(-1, a, b, a);
            case "pad" -> a.pad(new long[] {1, 0, 2}, new long[] {0, 2, 1}, 9);
            default -> throw new IllegalArgumentException(op);
        };
    }

    @Compile
    static Tensor structural(String op, Tensor a, Tensor b) {
        return structBody(op, a, b);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64", "BOOL"})
    void structuralOpsMoveElements(DType t) {
        long[] s = {2, 3, 4};
        double[] va = new double[24], vb = new double[24];
        for (int i = 0; i < 24; i++) {
            va[i] = t == DType.BOOL ? i % 3 == 0 ? 1 : 0 : i;
            vb[i] = t == DType.BOOL ? i % 2 : 100 + i;
        }
        Tensor a = make(t, va, s), b = make(t, vb, s);
        for (String op : List.of("reshape", "reshapeFlat", "transpose", "transposeReverse", "broadcastTo", "slice",
                "concat0", "concatLast", "pad")) {
            Tensor compiled = structural(op, a, b);
            assertExact(op, compiled, structBody(op, a, b));
            long[] outShape = compiled.shape();
            double[] want = new double[(int) Ref.size(outShape)];
            for (int f = 0; f < want.length; f++) {
                long[] o = Ref.unravel(f, outShape);
                want[f] = switch (op) {
                    case "reshape", "reshapeFlat" -> va[f];
                    case "transpose" -> va[(int) Ref.ravel(new long[] {o[1], o[2], o[0]}, s)];
                    case "transposeReverse" -> va[(int) Ref.ravel(new long[] {o[2], o[1], o[0]}, s)];
                    case "broadcastTo" -> va[(int) Ref.ravel(new long[] {0, o[1], 0}, s)];
                    case "slice" -> va[(int) Ref.ravel(new long[] {o[0] + 1, o[1] + 1, o[2]}, s)];
                    case "concat0" -> o[0] < 2 ? va[(int) Ref.ravel(o, s)]
                            : vb[(int) Ref.ravel(new long[] {o[0] - 2, o[1], o[2]}, s)];
                    case "concatLast" -> {
                        long[] i = {o[0], o[1], o[2] % 4};
                        yield o[2] / 4 == 1 ? vb[(int) Ref.ravel(i, s)] : va[(int) Ref.ravel(i, s)];
                    }
                    case "pad" -> {
                        long[] i = {o[0] - 1, o[1], o[2] - 2};
                        boolean inside = i[0] >= 0 && i[0] < 2 && i[1] < 3 && i[2] >= 0 && i[2] < 4;
                        yield inside ? va[(int) Ref.ravel(i, s)] : 9;
                    }
                    default -> throw new IllegalArgumentException(op);
                };
            }
            long[] expectShape = switch (op) {
                case "reshape" -> new long[] {4, 6};
                case "reshapeFlat" -> new long[] {24};
                case "transpose" -> new long[] {4, 2, 3};
                case "transposeReverse" -> new long[] {4, 3, 2};
                case "broadcastTo" -> new long[] {2, 3, 5};
                case "slice" -> new long[] {1, 2, 2};
                case "concat0" -> new long[] {4, 3, 4};
                case "concatLast" -> new long[] {2, 3, 12};
                case "pad" -> new long[] {3, 5, 7};
                default -> throw new IllegalArgumentException(op);
            };
            assertUlps(op + " vs reference", compiled, t, expectShape, want, 0);
        }
    }

    static Tensor creationBody(DType t, int n, Tensor x) {
        return Tensor.arange(t, n).add(Tensor.full(t, 3, n)).mul(Tensor.ones(t, n)).add(Tensor.zeros(t, n)).add(x);
    }

    @Compile
    static Tensor creation(DType t, int n, Tensor x) {
        return creationBody(t, n, x);
    }

    @Compile
    static Tensor arangeOnly(DType t, int n) {
        return Tensor.arange(t, n);
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void constantsCreatedInsideTheTrace(DType t) {
        Tensor x = make(t, new double[] {10}, 1);
        Tensor compiled = creation(t, 5, x);
        assertExact("creation", compiled, creationBody(t, 5, x));
        assertUlps("creation vs reference", compiled, t, new long[] {5}, new double[] {13, 14, 15, 16, 17}, 0);
        assertUlps("arange", arangeOnly(t, 4), t, new long[] {4}, new double[] {0, 1, 2, 3}, 0);
    }

    /** Several fusable elementwise ops in one program: fusion must not change results for exact ops. */
    @Compile
    static Tensor chain(Tensor a, Tensor b) {
        return a.mul(b).add(a).sub(b.mul(2)).maximum(a.neg()).abs();
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void fusedChainEqualsEager(DType t) {
        Random rnd = new Random(5);
        double[] va = Ref.values(rnd, t, 12, 5), vb = Ref.values(rnd, t, 4, 5);
        Tensor a = make(t, va, 3, 4), b = make(t, vb, 4);
        Tensor compiled = chain(a, b);
        assertExact("chain", compiled, a.mul(b).add(a).sub(b.mul(2)).maximum(a.neg()).abs());
        double[] want = new double[12];
        for (int i = 0; i < 12; i++) {
            double x = va[i], y = vb[i % 4];
            want[i] = Math.abs(Math.max(x * y + x - y * 2, -x));
        }
        assertUlps("chain vs reference", compiled, t, new long[] {3, 4}, want, 0);
    }
}
