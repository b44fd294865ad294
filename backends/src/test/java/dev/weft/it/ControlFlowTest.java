package dev.weft.it;

import static dev.weft.it.Ref.assertExact;
import static dev.weft.it.Ref.assertUlps;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link Weft#fori} and {@link Weft#cond} compiled equal eager runs and plain-loop references. */
class ControlFlowTest {
    private static final double[] X = {0.5, -1.25, 2, 3.75};

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** carry = carry * 0.5 + i + scale (scale captured from outside the loop). */
    static Tensor affineLoopBody(Tensor x, Tensor scale, int n) {
        return Weft.fori(0, n, x, (i, c) -> c.mul(0.5).add(i.cast(c.dtype())).add(scale));
    }

    @Compile
    static Tensor affineLoop(Tensor x, Tensor scale, int n) {
        return affineLoopBody(x, scale, n);
    }

    private static double[] affineReference(double[] x, double scale, int n) {
        double[] c = x.clone();
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < c.length; k++) {
                c[k] = c[k] * 0.5 + i + scale;
            }
        }
        return c;
    }

    @Test
    void singleCarryLoopCapturingAnOuterTensor() {
        for (DType t : List.of(DType.F32, DType.F64)) {
            Tensor x = Ref.make(t, X, 4), scale = Ref.make(t, new double[] {0.25});
            for (int n : new int[] {1, 7, 100}) {
                Tensor compiled = affineLoop(x, scale, n);
                assertExact("fori n=" + n, compiled, affineLoopBody(x, scale, n));
                assertUlps("fori vs reference", compiled, t, new long[] {4}, affineReference(X, 0.25, n),
                        t == DType.F32 ? 4 : 0);
            }
        }
    }

    @Test
    void zeroTripLoopReturnsItsInit() {
        Tensor x = Ref.make(DType.F64, X, 4), scale = Ref.make(DType.F64, new double[] {1});
        Tensor compiled = affineLoop(x, scale, 0);
        assertExact("zero-trip", compiled, x);
        assertExact("zero-trip eager", affineLoopBody(x, scale, 0), x);
    }

    /** Fibonacci pair (a, b) -> (b, a + b) and a running I64 sum of i, three carries of two dtypes. */
    static List<Tensor> fibBody(Tensor a, Tensor b, Tensor s, int n) {
        return Weft.fori(0, n, List.of(a, b, s),
                (i, c) -> List.of(c.get(1), c.get(0).add(c.get(1)), c.get(2).add(i.cast(DType.I64))));
    }

    @Compile
    static List<Tensor> fib(Tensor a, Tensor b, Tensor s, int n) {
        return fibBody(a, b, s, n);
    }

    @Test
    void multiCarryLoop() {
        Tensor a = Tensor.of(new int[] {0, 2}), b = Tensor.of(new int[] {1, 3}), s = Tensor.of(new long[] {0});
        List<Tensor> compiled = fib(a, b, s, 20);
        List<Tensor> eager = fibBody(a, b, s, 20);
        assertThat(compiled).hasSize(3);
        for (int k = 0; k < 3; k++) {
            assertExact("carry " + k, compiled.get(k), eager.get(k));
        }
        long[] ra = {0, 2}, rb = {1, 3};
        for (int i = 0; i < 20; i++) {
            for (int k = 0; k < 2; k++) {
                long t = ra[k] + rb[k];
                ra[k] = rb[k];
                rb[k] = t;
            }
        }
        assertThat(compiled.get(0).toLongArray()).containsExactly(ra);
        assertThat(compiled.get(1).toLongArray()).containsExactly(rb);
        assertThat(compiled.get(2).toLongArray()).containsExactly(190L);
    }

    /**
     * Carries the executor binds once per loop instead of once per iteration: {@code a} comes back unchanged and
     * is read by an op that could overwrite a dying operand, {@code b} comes back in {@code a}'s place of another
     * carry; in the second loop the counter is read too, so the body runs its own increment.
     */
    static List<Tensor> pinnedBody(Tensor a, Tensor b, int n) {
        List<Tensor> first = Weft.fori(0, n, List.of(a, b, b),
                (i, c) -> List.of(c.get(0), c.get(1).add(c.get(0).mul(2)), c.get(1)));
        return Weft.fori(0, n, first, (i, c) -> List.of(c.get(0), c.get(2), c.get(1).add(i.cast(DType.F64))));
    }

    @Compile
    static List<Tensor> pinned(Tensor a, Tensor b, int n) {
        return pinnedBody(a, b, n);
    }

    @Test
    void carriesReturnedUnchangedStayIntactAcrossIterations() {
        Tensor a = Ref.make(DType.F64, X, 4), b = Ref.make(DType.F64, new double[] {1, 2, 3, 4}, 4);
        for (int n : new int[] {0, 1, 6}) {
            List<Tensor> compiled = pinned(a, b, n);
            List<Tensor> eager = pinnedBody(a, b, n);
            double[] ra = X.clone(), rb = {1, 2, 3, 4}, rc = rb.clone();
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < 4; k++) {
                    rc[k] = rb[k];
                    rb[k] += 2 * ra[k];
                }
            }
            for (int i = 0; i < n; i++) {
                double[] t = rb;
                rb = rc.clone();
                rc = t;
                for (int k = 0; k < 4; k++) {
                    rc[k] += i;
                }
            }
            for (int k = 0; k < 3; k++) {
                assertExact("n=" + n + " carry " + k, compiled.get(k), eager.get(k));
            }
            assertThat(compiled.get(0).toDoubleArray()).containsExactly(ra);
            assertThat(compiled.get(1).toDoubleArray()).containsExactly(rb);
            assertThat(compiled.get(2).toDoubleArray()).containsExactly(rc);
        }
    }

    /** Outer loop of 3, inner loop of 4 adding (i*10 + j) to every element. */
    static Tensor nestedBody(Tensor x) {
        return Weft.fori(0, 3, x, (i, c) -> Weft.fori(0, 4, c,
                (j, d) -> d.add(i.mul(10).add(j).cast(DType.F64))));
    }

    @Compile
    static Tensor nested(Tensor x) {
        return nestedBody(x);
    }

    @Test
    void nestedLoops() {
        Tensor x = Ref.make(DType.F64, X, 2, 2);
        Tensor compiled = nested(x);
        assertExact("nested", compiled, nestedBody(x));
        double add = 0;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                add += i * 10 + j;
            }
        }
        double[] want = new double[4];
        for (int k = 0; k < 4; k++) {
            want[k] = X[k] + add;
        }
        assertUlps("nested vs reference", compiled, DType.F64, new long[] {2, 2}, want, 0);
    }

    /** If the sum is positive, double the tensor, else negate it. */
    static Tensor signSwitchBody(Tensor x) {
        return Weft.cond(x.sum().gt(0), () -> x.mul(2), () -> x.neg());
    }

    @Compile
    static Tensor signSwitch(Tensor x) {
        return signSwitchBody(x);
    }

    @Test
    void condOutsideLoopTakesEachBranch() {
        for (double[] v : new double[][] {{1, 2, -0.5}, {-3, 1, 0.5}}) {
            Tensor x = Ref.make(DType.F32, v, 3);
            Tensor compiled = signSwitch(x);
            assertExact("cond", compiled, signSwitchBody(x));
            double sum = v[0] + v[1] + v[2];
            double[] want = new double[3];
            for (int k = 0; k < 3; k++) {
                want[k] = sum > 0 ? v[k] * 2 : -v[k];
            }
            assertUlps("cond vs reference", compiled, DType.F32, new long[] {3}, want, 0);
        }
    }

    /** Collatz steps on one I64 value, with the branch chosen per iteration by cond. */
    static Tensor collatzBody(Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> Weft.cond(c.rem(2).eq(0).reshape(),
                () -> c.div(2), () -> c.mul(3).add(1)));
    }

    @Compile
    static Tensor collatz(Tensor x, int steps) {
        return collatzBody(x, steps);
    }

    @Test
    void condInsideLoop() {
        for (long start : new long[] {27, 6, 1}) {
            Tensor x = Tensor.of(new long[] {start});
            Tensor compiled = collatz(x, 30);
            assertExact("collatz", compiled, collatzBody(x, 30));
            long c = start;
            for (int i = 0; i < 30; i++) {
                c = c % 2 == 0 ? c / 2 : 3 * c + 1;
            }
            assertThat(compiled.toLongArray()).containsExactly(c);
        }
    }

    @Compile
    static Tensor longLoop(Tensor x) {
        return Weft.fori(0, 1000, x, (i, c) -> c.add(1));
    }

    @Test
    void thousandIterationsLowerToOneWhile() {
        String mlir = Weft.lower(ControlFlowTest.class, "longLoop", TensorSpec.of(DType.F32, 4, 4)).toMlir();
        Matcher m = Pattern.compile("stablehlo\\.while").matcher(mlir);
        int count = 0;
        while (m.find()) {
            count++;
        }
        assertThat(count).as(mlir).isEqualTo(1);
        assertThat(mlir).contains("1000");
        Tensor out = longLoop(Tensor.zeros(DType.F32, 4, 4));
        assertUlps("longLoop", out, DType.F32, new long[] {4, 4}, thousands(), 0);
    }

    private static double[] thousands() {
        double[] v = new double[16];
        Arrays.fill(v, 1000);
        return v;
    }
}
