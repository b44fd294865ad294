package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.FloatMath;
import dev.weft.backends.cpu.kernels.FloatMathBlock;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Generated loops of fusions holding f32 sine, cosine or exponential, which run block by block
 * ({@link BlockedLoopPlan}), equal a plain loop over {@link FloatMath} and Java arithmetic bit for bit: at every
 * size around the block and the element-by-element threshold, over sub-ranges, with values crossing several
 * kernel stages in every dtype, rank-0 operands, a result written over its input, and arguments the kernels
 * leave to the scalar functions.
 */
class BlockedLoopTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final int SIZE = FloatMathBlock.SIZE;

    /** {@code |sin(x*2+1)*x - 0.5|}, benchmark case 1, with its constants as rank-0 inputs 1, 2 and 3. */
    private static FusedLoopSpec chain() {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, DType.F32);
        int two = s.scalar(1, DType.F32);
        int one = s.scalar(2, DType.F32);
        int half = s.scalar(3, DType.F32);
        int sin = s.apply(ElementwiseOp.SIN, DType.F32, s.apply(ElementwiseOp.ADD, DType.F32,
                s.apply(ElementwiseOp.MUL, DType.F32, x, two), one));
        int y = s.apply(ElementwiseOp.ABS, DType.F32, s.apply(ElementwiseOp.SUB, DType.F32,
                s.apply(ElementwiseOp.MUL, DType.F32, sin, x), half));
        return s.spec(y);
    }

    private static float chain(float x) {
        return Math.abs(FloatMath.sin(x * 2f + 1f) * x - 0.5f);
    }

    @Test
    void theChainRunsTwoLoopsAroundOneKernelAndKeepsOnlyItsInputKernelAndResultInArrays() {
        BlockedLoopPlan plan = BlockedLoopPlan.of(chain()).orElseThrow();
        assertThat(plan.loops()).isEqualTo(2);
        assertThat(plan.kernels(1)).containsExactly(6);
        List<Integer> arrays = new ArrayList<>();
        for (int k = 0; k < chain().nodes().size(); k++) {
            if (plan.hasArray(k)) {
                arrays.add(k);
            }
        }
        assertThat(arrays).as("x, sin, the result").containsExactly(0, 6, 9);
        assertThat(plan.stores(0)).as("the argument goes into sin's array").containsExactly(6);
        assertThat(plan.loads(1)).containsExactly(0, 6);
    }

    @Test
    void fusionsWithoutF32KernelsHaveNoPlan() {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, DType.F64);
        assertThat(BlockedLoopPlan.of(s.spec(s.apply(ElementwiseOp.SIN, DType.F64, x)))).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 31, 32, 33, SIZE - 1, SIZE, SIZE + 1, 3 * SIZE + 5,
        (int) FusedLoopRunner.PARALLEL_MIN + 3})
    void theChainEqualsAPlainLoopAtEverySize(int n) {
        float[] x = new float[n];
        Random rnd = new Random(n);
        for (int i = 0; i < n; i++) {
            x[i] = i % 1000 == 999 ? Float.NaN : (float) (rnd.nextGaussian() * 5);
        }
        MemorySegment out = Arena.ofAuto().allocate(4L * n + 4);
        FusedLoopRunner.run(FusedLoopGenerator.loop(chain()), chainInputs(x), new MemorySegment[] {out}, n);
        for (int i = 0; i < n; i++) {
            assertBits(out.getAtIndex(F32, i), chain(x[i]), "element " + i);
        }
    }

    @Test
    void aSubRangeWritesOnlyItsElements() {
        int n = 3 * SIZE;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.01f - 7f;
        }
        MemorySegment out = Arena.ofAuto().allocate(4L * n);
        out.fill((byte) 0x7f);
        long from = 37;
        long to = from + SIZE + 200;
        FusedLoopGenerator.loop(chain()).run(chainInputs(x), new MemorySegment[] {out}, from, to);
        for (int i = 0; i < n; i++) {
            float want = i >= from && i < to ? chain(x[i]) : Float.intBitsToFloat(0x7f7f7f7f);
            assertBits(out.getAtIndex(F32, i), want, "element " + i);
        }
    }

    @Test
    void theResultMayBeItsInput() {
        int n = 2 * SIZE + 3;
        float[] x = new float[n];
        MemorySegment data = Arena.ofAuto().allocate(4L * n);
        for (int i = 0; i < n; i++) {
            x[i] = (float) Math.sqrt(i) - 20f;
            data.setAtIndex(F32, i, x[i]);
        }
        MemorySegment[] in = chainInputs(x);
        in[0] = data;
        FusedLoopGenerator.loop(chain()).run(in, new MemorySegment[] {data}, 0, n);
        for (int i = 0; i < n; i++) {
            assertBits(data.getAtIndex(F32, i), chain(x[i]), "element " + i);
        }
    }

    /**
     * {@code c = x < k}, {@code s = sin x}, {@code e = exp(s)·cos(x)}, {@code y = where(c, e, f32(k))},
     * {@code w = f64(y)·d + f64(sin(2x))}, {@code m = i64(k)·i64(k)} for {@code x: f32}, {@code k: i32},
     * {@code d: f64} (rank 0): three kernel stages, a bool, an f32 and an i32 value crossing them, a kernel
     * result, a kernel of a rank-0 value, and results of every stage.
     */
    @ParameterizedTest
    @ValueSource(ints = {5, 200, 3 * SIZE + 1})
    void valuesOfEveryDtypeCrossKernelStages(int n) {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, DType.F32);
        int k = s.element(1, DType.I32);
        int d = s.scalar(2, DType.F64);
        int half = s.scalar(3, DType.F32);
        int c = s.compare(ElementwiseOp.LT, DType.F32, x, s.apply(ElementwiseOp.CONVERT, DType.I32, DType.F32, k));
        int sin = s.apply(ElementwiseOp.SIN, DType.F32, x);
        int e = s.apply(ElementwiseOp.MUL, DType.F32, s.apply(ElementwiseOp.EXP, DType.F32, sin),
                s.apply(ElementwiseOp.COS, DType.F32, x));
        int y = s.select(DType.F32, c, e, s.apply(ElementwiseOp.CONVERT, DType.I32, DType.F32, k));
        int sin2x = s.apply(ElementwiseOp.SIN, DType.F32, s.apply(ElementwiseOp.ADD, DType.F32, x, x));
        int w = s.apply(ElementwiseOp.ADD, DType.F64, s.apply(ElementwiseOp.MUL, DType.F64,
                s.apply(ElementwiseOp.CONVERT, DType.F32, DType.F64, y), d),
                s.apply(ElementwiseOp.CONVERT, DType.F32, DType.F64, sin2x));
        int wide = s.apply(ElementwiseOp.CONVERT, DType.I32, DType.I64, k);
        int m = s.apply(ElementwiseOp.MUL, DType.I64, wide, wide);
        int cosHalf = s.apply(ElementwiseOp.COS, DType.F32, half);
        FusedLoopSpec spec = s.spec(w, m, c, sin, cosHalf, half);

        Random rnd = new Random(n);
        float[] xs = new float[n];
        int[] ks = new int[n];
        MemorySegment xSeg = Arena.ofAuto().allocate(4L * n);
        MemorySegment kSeg = Arena.ofAuto().allocate(4L * n);
        for (int i = 0; i < n; i++) {
            xs[i] = i == 3 ? Float.POSITIVE_INFINITY : (float) (rnd.nextGaussian() * 3);
            ks[i] = rnd.nextInt(7) - 3;
            xSeg.setAtIndex(F32, i, xs[i]);
            kSeg.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, ks[i]);
        }
        double dv = 1.25;
        float hv = 0.5f;
        MemorySegment[] in = {xSeg, kSeg, scalar(ValueLayout.JAVA_DOUBLE, dv), scalar(F32, hv)};
        MemorySegment[] out = {Arena.ofAuto().allocate(8L * n), Arena.ofAuto().allocate(8L * n),
            Arena.ofAuto().allocate(n), Arena.ofAuto().allocate(4L * n), Arena.ofAuto().allocate(4L * n),
            Arena.ofAuto().allocate(4L * n)};
        FusedLoopRunner.run(FusedLoopGenerator.loop(spec), in, out, n);

        for (int i = 0; i < n; i++) {
            boolean less = xs[i] < (float) ks[i];
            float sinX = FloatMath.sin(xs[i]);
            float yv = less ? FloatMath.exp(sinX) * FloatMath.cos(xs[i]) : (float) ks[i];
            double want = (double) yv * dv + (double) FloatMath.sin(xs[i] + xs[i]);
            String at = "element " + i;
            assertThat(Double.doubleToLongBits(out[0].getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i)))
                    .as(at).isEqualTo(Double.doubleToLongBits(want));
            assertThat(out[1].getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i)).as(at).isEqualTo((long) ks[i] * ks[i]);
            assertThat(out[2].get(ValueLayout.JAVA_BYTE, i)).as(at).isEqualTo((byte) (less ? 1 : 0));
            assertBits(out[3].getAtIndex(F32, i), sinX, at);
            assertBits(out[4].getAtIndex(F32, i), FloatMath.cos(hv), at);
            assertBits(out[5].getAtIndex(F32, i), hv, at);
        }
    }

    private static MemorySegment[] chainInputs(float[] x) {
        MemorySegment xs = Arena.ofAuto().allocate(4L * x.length + 4);
        MemorySegment.copy(x, 0, xs, F32, 0, x.length);
        return new MemorySegment[] {xs, scalar(F32, 2f), scalar(F32, 1f), scalar(F32, 0.5f)};
    }

    private static MemorySegment scalar(ValueLayout.OfFloat layout, float v) {
        MemorySegment s = Arena.ofAuto().allocate(4);
        s.set(layout, 0, v);
        return s;
    }

    private static MemorySegment scalar(ValueLayout.OfDouble layout, double v) {
        MemorySegment s = Arena.ofAuto().allocate(8);
        s.set(layout, 0, v);
        return s;
    }

    /** Equal bits, all NaNs alike (which NaN an op on two NaNs returns depends on the JIT's operand order). */
    private static void assertBits(float got, float want, String what) {
        assertThat(Float.floatToIntBits(got)).as("%s: %s vs %s", what, got, want)
                .isEqualTo(Float.floatToIntBits(want));
    }

}
