package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Jvp;
import dev.weft.Tensor;
import dev.weft.Vjp;
import dev.weft.Weft;
import dev.weft.ad.AdRules;
import dev.weft.prim.Prims;
import dev.weft.prim.reference.AllPrimitives;
import dev.weft.spi.Primitive;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every differentiation rule against central finite differences in f64 at random points: forward mode
 * ({@code Weft.jvp}) along a random tangent, and reverse mode ({@code Weft.vjp}) by the dot-product test
 * {@code <ct, J t> = <J^T ct, t>}. The table has a case for every primitive with a JVP rule (checked), and every
 * primitive has a rule or a reason why it has none.
 */
public class AdRulesTest {
    /** Inputs drawn from {@code [lo, hi]} with a random sign when {@code signed}. */
    record Input(long[] shape, double lo, double hi, boolean signed) {
        static Input of(double lo, double hi, long... shape) {
            return new Input(shape, lo, hi, false);
        }

        static Input any(long... shape) {
            return new Input(shape, -1, 1, false);
        }

        static Input signed(double lo, double hi, long... shape) {
            return new Input(shape, lo, hi, true);
        }
    }

    record Case(String name, Primitive<?> prim, Function<List<Tensor>, Tensor> f, List<Input> inputs, double eps,
                double tolerance) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** {@code x · sin(y)} with its derivative given as a custom rule. */
    private static final Function<List<Tensor>, List<Tensor>> X_SIN_Y = Weft.customJvp(
            x -> List.of(x.get(0).mul(x.get(1).sin())),
            (p, t) -> new Jvp(List.of(p.get(0).mul(p.get(1).sin())),
                    List.of(t.get(0).mul(p.get(1).sin()).add(t.get(1).mul(p.get(0)).mul(p.get(1).cos())))));

    private static Case c(String name, Primitive<?> prim, Function<List<Tensor>, Tensor> f, Input... in) {
        return new Case(name, prim, f, List.of(in), 1e-6, 1e-6);
    }

    static List<Case> cases() {
        long[] m = {3, 4};
        return List.of(
                c("add", Prims.ADD, x -> x.get(0).add(x.get(1)), Input.any(m), Input.any(m)),
                c("add broadcast", Prims.BROADCAST_IN_DIM, x -> x.get(0).add(x.get(1)), Input.any(m), Input.any(4)),
                c("sub", Prims.SUB, x -> x.get(0).sub(x.get(1)), Input.any(m), Input.any(m)),
                c("mul", Prims.MUL, x -> x.get(0).mul(x.get(1)), Input.any(m), Input.any(m)),
                c("div", Prims.DIV, x -> x.get(0).div(x.get(1)), Input.any(m), Input.signed(0.5, 2, m)),
                c("pow", Prims.POW, x -> x.get(0).pow(x.get(1)), Input.of(0.5, 2, m), Input.any(m)),
                c("maximum", Prims.MAX, x -> x.get(0).maximum(x.get(1)), Input.any(m), Input.any(m)),
                c("minimum", Prims.MIN, x -> x.get(0).minimum(x.get(1)), Input.any(m), Input.any(m)),
                c("rem", Prims.REM, x -> x.get(0).rem(x.get(1)), Input.of(2.1, 2.9, m), Input.of(1.1, 1.9, m)),
                c("atan2", Prims.ATAN2, x -> x.get(0).atan2(x.get(1)), Input.signed(0.2, 1, m),
                        Input.signed(0.2, 1, m)),
                c("neg", Prims.NEG, x -> x.get(0).neg(), Input.any(m)),
                c("abs", Prims.ABS, x -> x.get(0).abs(), Input.signed(0.2, 1, m)),
                c("exp", Prims.EXP, x -> x.get(0).exp(), Input.any(m)),
                c("log", Prims.LOG, x -> x.get(0).log(), Input.of(0.5, 2, m)),
                c("sqrt", Prims.SQRT, x -> x.get(0).sqrt(), Input.of(0.5, 2, m)),
                c("rsqrt", Prims.RSQRT, x -> x.get(0).rsqrt(), Input.of(0.5, 2, m)),
                c("tanh", Prims.TANH, x -> x.get(0).tanh(), Input.any(m)),
                c("sin", Prims.SIN, x -> x.get(0).sin(), Input.any(m)),
                c("cos", Prims.COS, x -> x.get(0).cos(), Input.any(m)),
                c("where", Prims.SELECT, x -> Tensor.where(x.get(0).gt(0), x.get(0).mul(x.get(1)), x.get(1).exp()),
                        Input.signed(0.2, 1, m), Input.any(m)),
                new Case("cast f32 and back", Prims.CONVERT, x -> x.get(0).cast(DType.F32).mul(3).cast(DType.F64),
                        List.of(Input.any(m)), 1e-2, 1e-5),
                c("sum", Prims.REDUCE_SUM, x -> x.get(0).sum(1), Input.any(m)),
                c("prod", Prims.REDUCE_PROD, x -> x.get(0).prod(0), Input.signed(0.5, 1.5, m)),
                c("max", Prims.REDUCE_MAX, x -> x.get(0).max(1), Input.any(m)),
                c("min", Prims.REDUCE_MIN, x -> x.get(0).min(), Input.any(m)),
                c("matmul 2x2", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), Input.any(3, 4), Input.any(4, 2)),
                c("matmul 1x2", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), Input.any(4), Input.any(4, 2)),
                c("matmul 2x1", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), Input.any(3, 4), Input.any(4)),
                c("matmul 1x1", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), Input.any(4), Input.any(4)),
                c("matmul batch", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), Input.any(2, 3, 4),
                        Input.any(2, 4, 5)),
                c("reshape", Prims.RESHAPE, x -> x.get(0).reshape(2, 6), Input.any(m)),
                c("transpose", Prims.TRANSPOSE, x -> x.get(0).transpose(2, 0, 1), Input.any(2, 3, 4)),
                c("broadcastTo", Prims.BROADCAST_IN_DIM, x -> x.get(0).broadcastTo(2, 3, 4), Input.any(3, 1)),
                c("slice", Prims.SLICE, x -> x.get(0).slice(new long[] {1, 0}, new long[] {3, 3}), Input.any(m)),
                c("dynamic_slice", Prims.DYNAMIC_SLICE, x -> x.get(0).dynamicSlice(List.of(Tensor.scalar(DType.I32,
                        1), Tensor.scalar(DType.I64, 7)), 2, 2), Input.any(m)),
                c("dynamic_update_slice", Prims.DYNAMIC_UPDATE_SLICE, x -> x.get(0).dynamicUpdateSlice(
                        x.get(1).exp(), List.of(Tensor.scalar(DType.I32, 2), Tensor.scalar(DType.I32, -1))),
                        Input.any(m), Input.any(1, 3)),
                c("pad", Prims.PAD, x -> x.get(0).pad(new long[] {1, 0}, new long[] {0, 2}, 1.5), Input.any(m)),
                c("concat", Prims.CONCAT, x -> Tensor.concat(1, x.get(0), x.get(1).exp()), Input.any(m),
                        Input.any(3, 2)),
                comparison("lt", Prims.LT, (a, b) -> a.lt(b)), comparison("le", Prims.LE, (a, b) -> a.le(b)),
                comparison("gt", Prims.GT, (a, b) -> b.gt(a)), comparison("ge", Prims.GE, (a, b) -> b.ge(a)),
                comparison("eq", Prims.EQ, (a, b) -> a.eq(b).eq(a.lt(b))),
                comparison("ne", Prims.NE, (a, b) -> a.ne(b)),
                c("fori, carry and capture", Prims.FORI, x -> Weft.fori(0, 3, x.get(0),
                        (i, c) -> c.mul(x.get(1)).add(c.sin())), Input.any(m), Input.any(m)),
                c("fori, two carries and the index", Prims.FORI, x -> Weft.fori(1, 4, List.of(x.get(0), x.get(1)),
                        (i, c) -> List.of(c.get(0).mul(c.get(1)).add(i.cast(DType.F64)), c.get(1).tanh())).get(0),
                        Input.any(m), Input.any(m)),
                c("cond, true branch", Prims.COND, x -> Weft.cond(x.get(0).sum().gt(0),
                        () -> x.get(0).mul(x.get(1)), () -> x.get(1).exp()), Input.of(0.2, 1, m), Input.any(m)),
                c("cond, false branch", Prims.COND, x -> Weft.cond(x.get(0).sum().lt(0),
                        () -> x.get(0).mul(x.get(1)), () -> x.get(1).exp().mul(x.get(0))), Input.of(0.2, 1, m),
                        Input.any(m)),
                c("custom_jvp", Prims.CUSTOM_JVP_CALL, x -> X_SIN_Y.apply(x).getFirst(), Input.any(m), Input.any(m)));
    }

    /** A comparison choosing between two branches; the inputs never come close to a tie. */
    private static Case comparison(String name, Primitive<?> prim, java.util.function.BinaryOperator<Tensor> cmp) {
        return c(name, prim, x -> Tensor.where(cmp.apply(x.get(0), x.get(1)), x.get(0).exp(), x.get(1).mul(x.get(0))),
                Input.of(0, 0.4, 3, 4), Input.of(0.6, 1, 3, 4));
    }

    @Test
    void everyPrimitiveHasAJvpRuleOrAReason() {
        List<String> missing = new ArrayList<>();
        for (Primitive<?> p : AllPrimitives.all()) {
            if (!AdRules.hasJvp(p) && AdRules.whyNotDifferentiable(p).isEmpty()) {
                missing.add(p.name());
            }
        }
        assertThat(missing).as("primitives without a JVP rule or a reason").isEmpty();
    }

    /** Every array primitive's rule; the communication primitives' cases, on ranks, are the backends' CommGradTest. */
    @Test
    void everyRuleHasACaseHere() {
        Set<Primitive<?>> covered = new LinkedHashSet<>();
        cases().forEach(c -> covered.add(c.prim()));
        forwardOnlyCases().forEach(c -> covered.add(c.prim()));
        List<String> untested = AllPrimitives.array().stream().filter(AdRules::hasJvp).filter(p -> !covered.contains(p))
                .map(Primitive::name).toList();
        assertThat(untested).as("primitives with rules but no finite-difference case").isEmpty();
    }

    /** Primitives that reverse mode refuses, as JAX does ({@code whileLoop}: the steps to store are unknown). */
    static List<Case> forwardOnlyCases() {
        long[] m = {2, 3};
        return List.of(c("whileLoop", Prims.WHILE, x -> Weft.whileLoop(s -> s.get(1).lt(3),
                s -> List.of(s.get(0).mul(x.get(1)).add(s.get(0).sin()), s.get(1).add(1)),
                List.of(x.get(0), Tensor.scalar(DType.I32, 0))).get(0), Input.any(m), Input.any(m)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("forwardOnlyCases")
    void forwardModeOfForwardOnlyRulesMatchesCentralDifferences(Case c) {
        forwardModeMatchesCentralDifferences(c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void forwardModeMatchesCentralDifferences(Case c) {
        Random rnd = new Random(c.name().hashCode());
        List<Tensor> x = draw(c.inputs(), rnd);
        List<Tensor> t = tangents(x, rnd);
        Jvp jvp = Weft.jvp(in -> List.of(c.f().apply(in)), x, t);
        double[] fd = centralDifference(c, x, t);
        assertClose(jvp.tangents().getFirst().toDoubleArray(), fd, c.tolerance());
        assertThat(jvp.outputs().getFirst().toDoubleArray()).containsExactly(c.f().apply(x).toDoubleArray());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void reverseModeIsTheTransposeOfForwardMode(Case c) {
        Random rnd = new Random(c.name().hashCode() * 31L);
        List<Tensor> x = draw(c.inputs(), rnd);
        List<Tensor> t = tangents(x, rnd);
        Vjp vjp = Weft.vjp(in -> List.of(c.f().apply(in)), x);
        Tensor y = vjp.outputs().getFirst();
        Tensor ct = random(y.shape(), -1, 1, false, rnd);
        List<Tensor> cts = vjp.pullback(List.of(ct));
        double lhs = dot(ct.toDoubleArray(), centralDifference(c, x, t));
        double rhs = 0;
        for (int i = 0; i < x.size(); i++) {
            assertThat(cts.get(i).shape()).isEqualTo(x.get(i).shape());
            rhs += dot(cts.get(i).toDoubleArray(), t.get(i).toDoubleArray());
        }
        assertThat(rhs).isCloseTo(lhs, org.assertj.core.api.Assertions.within(c.tolerance() * (1 + Math.abs(lhs))));
    }

    static List<Tensor> draw(List<Input> inputs, Random rnd) {
        return inputs.stream().map(in -> random(in.shape(), in.lo(), in.hi(), in.signed(), rnd)).toList();
    }

    private static List<Tensor> tangents(List<Tensor> x, Random rnd) {
        return x.stream().map(v -> random(v.shape(), -1, 1, false, rnd)).toList();
    }

    public static Tensor random(long[] shape, double lo, double hi, boolean signed, Random rnd) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        double[] v = new double[(int) n];
        for (int i = 0; i < v.length; i++) {
            v[i] = lo + (hi - lo) * rnd.nextDouble();
            if (signed && rnd.nextBoolean()) {
                v[i] = -v[i];
            }
        }
        return shape.length == 0 ? Tensor.of(v).reshape() : Tensor.of(v, shape);
    }

    /** {@code (f(x + eps t) - f(x - eps t)) / 2 eps}. */
    private static double[] centralDifference(Case c, List<Tensor> x, List<Tensor> t) {
        List<Tensor> plus = new ArrayList<>(), minus = new ArrayList<>();
        for (int i = 0; i < x.size(); i++) {
            plus.add(x.get(i).add(t.get(i).mul(c.eps())));
            minus.add(x.get(i).sub(t.get(i).mul(c.eps())));
        }
        double[] a = c.f().apply(plus).toDoubleArray(), b = c.f().apply(minus).toDoubleArray();
        double[] d = new double[a.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = (a[i] - b[i]) / (2 * c.eps());
        }
        return d;
    }

    public static void assertClose(double[] actual, double[] expected, double tolerance) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < actual.length; i++) {
            assertThat(actual[i]).as("element %d of %s vs %s", i, java.util.Arrays.toString(actual),
                    java.util.Arrays.toString(expected))
                    .isCloseTo(expected[i], org.assertj.core.api.Assertions.within(tolerance * (1 + Math.abs(expected[i]))));
        }
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    static Stream<Case> caseStream() {
        return cases().stream();
    }
}
