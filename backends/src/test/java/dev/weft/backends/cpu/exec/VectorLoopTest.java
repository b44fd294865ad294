package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fused loops of f64 and f32 arithmetic run a Vector API main loop ({@link VectorLoopEmitter}) and still equal the
 * eager kernels bit for bit: every supported op on NaN, infinities, zeros of both signs, subnormals and extremes,
 * at every length up to 40 and odd large ones (scalar tails), over sub-ranges, with a rank-0 operand broadcast,
 * with a result written over its input, and the heat stencil compiled end to end. Fusions with any other op or
 * dtype keep the scalar loop. The test JVM runs with {@code --add-modules jdk.incubator.vector} (the root pom);
 * the tests fail if loops stop being vectorized there.
 */
class VectorLoopTest {
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private static final double[] SPECIAL = {0.0, -0.0, 1.0, -1.0, 2.5, -3.75, Double.NaN, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_NORMAL / 3, Double.MAX_VALUE, 1e-300, 7e300};


    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Test
    void theTestJvmVectorizes() {
        assertThat(ModuleLayer.boot().findModule("jdk.incubator.vector")).isPresent();
        assertThat(VectorLoopEmitter.AVAILABLE).as("256-bit Vector API available").isTrue();
    }

    static Stream<Arguments> opsAndDtypes() {
        List<Arguments> out = new ArrayList<>();
        for (DType t : List.of(DType.F64, DType.F32)) {
            for (ElementwiseOp op : ElementwiseOp.values()) {
                if (VectorLoopEmitter.method(op) != null) {
                    out.add(Arguments.of(op, t));
                }
            }
        }
        return out.stream();
    }

    /**
     * Every pair of special values, repeated to an odd count (the last ones run in the scalar tail), at several
     * offsets: on the first runs (interpreted) and after {@value #WARM} more, when C2 has compiled the loop with
     * the vector intrinsics.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("opsAndDtypes")
    void everyOpEqualsItsEagerKernelOnSpecialValues(ElementwiseOp op, DType t) {
        int pairs = SPECIAL.length * SPECIAL.length;
        int n = 40 * pairs + 3;
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = SPECIAL[i % pairs / SPECIAL.length];
            y[i] = SPECIAL[i % SPECIAL.length];
        }
        SpecBuilder s = new SpecBuilder();
        int a = s.element(0, t);
        int b = s.element(1, t);
        FusedLoopSpec spec = op.arity() == 1 ? s.spec(s.apply(op, t, a)) : s.spec(s.apply(op, t, a, b));
        FusedLoop loop = FusedLoopGenerator.loop(spec);
        assertThat(FusedLoopGenerator.isVectorized(loop)).isTrue();
        MemorySegment sx = segment(t, x);
        MemorySegment sy = segment(t, y);
        MemorySegment want = Arena.ofAuto().allocate((long) n * t.byteSize());
        Elementwise.kernel(op, t, t).apply(sx, sy, null, want, n);
        for (int warm : new int[] {0, WARM}) {
            for (int from : new int[] {0, 1, 3}) {
                MemorySegment got = Arena.ofAuto().allocate((long) n * t.byteSize());
                MemorySegment[] in = {sx, sy};
                MemorySegment[] out = {got};
                for (int r = 0; r <= warm; r++) {
                    loop.run(in, out, from, n);
                }
                assertSameBits(t, got.asSlice(from * t.byteSize()), want.asSlice(from * t.byteSize()), n - from,
                        op + " from " + from + " after " + warm + " runs");
            }
        }
    }

    private static final int WARM = 300;

    static Stream<Arguments> lengths() {
        List<Arguments> out = new ArrayList<>();
        for (DType t : List.of(DType.F64, DType.F32)) {
            IntStream.rangeClosed(0, 40).forEach(n -> out.add(Arguments.of(t, n, 0)));
            for (int n : new int[] {1001, 4099, 70_013, 300_007}) {
                out.add(Arguments.of(t, n, 0));
                out.add(Arguments.of(t, n, 5));
            }
        }
        return out.stream();
    }

    /**
     * {@code ((x + y) * s - |x| / y, max(min(x, y), -sqrt(y)))}, {@code s} rank 0, over {@code [from, n)}; the
     * first result is written over {@code x}.
     */
    @ParameterizedTest(name = "{0} n={1} from={2}")
    @MethodSource("lengths")
    void aChainWithAScalarEqualsEagerAtEveryLength(DType t, int n, int from) {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, t);
        int y = s.element(1, t);
        int k = s.scalar(2, t);
        int first = s.apply(ElementwiseOp.SUB, t, s.apply(ElementwiseOp.MUL, t, s.apply(ElementwiseOp.ADD, t, x, y), k),
                s.apply(ElementwiseOp.DIV, t, s.apply(ElementwiseOp.ABS, t, x), y));
        int second = s.apply(ElementwiseOp.MAX, t, s.apply(ElementwiseOp.MIN, t, x, y),
                s.apply(ElementwiseOp.NEG, t, s.apply(ElementwiseOp.SQRT, t, y)));
        FusedLoop loop = FusedLoopGenerator.loop(s.spec(first, second));
        assertThat(FusedLoopGenerator.isVectorized(loop)).isTrue();

        Random rnd = new Random(n * 31L + from);
        double[] xv = mostlyGaussian(rnd, n, 100);
        double[] yv = mostlyGaussian(rnd, n, 1);
        MemorySegment sx = segment(t, xv);
        MemorySegment sy = segment(t, yv);
        MemorySegment sk = segment(t, new double[] {0.3});
        long bytes = (long) n * t.byteSize();
        // eager: one kernel per op; the loop leaves x's first elements as they are
        MemorySegment sum = Arena.ofAuto().allocate(bytes);
        MemorySegment kk = segment(t, filled(n, 0.3));
        MemorySegment scaled = Arena.ofAuto().allocate(bytes);
        MemorySegment ax = Arena.ofAuto().allocate(bytes);
        MemorySegment q = Arena.ofAuto().allocate(bytes);
        MemorySegment want1 = Arena.ofAuto().allocate(bytes);
        Elementwise.binary(ElementwiseOp.ADD, t, sx, sy, sum, n);
        Elementwise.binary(ElementwiseOp.MUL, t, sum, kk, scaled, n);
        Elementwise.unary(ElementwiseOp.ABS, t, sx, ax, n);
        Elementwise.binary(ElementwiseOp.DIV, t, ax, sy, q, n);
        Elementwise.binary(ElementwiseOp.SUB, t, scaled, q, want1, n);
        MemorySegment mn = Arena.ofAuto().allocate(bytes);
        MemorySegment rt = Arena.ofAuto().allocate(bytes);
        MemorySegment ng = Arena.ofAuto().allocate(bytes);
        MemorySegment want2 = Arena.ofAuto().allocate(bytes);
        Elementwise.binary(ElementwiseOp.MIN, t, sx, sy, mn, n);
        Elementwise.unary(ElementwiseOp.SQRT, t, sy, rt, n);
        Elementwise.unary(ElementwiseOp.NEG, t, rt, ng, n);
        Elementwise.binary(ElementwiseOp.MAX, t, mn, ng, want2, n);
        MemorySegment.copy(sx, 0, want1, 0, (long) from * t.byteSize());
        MemorySegment got2 = Arena.ofAuto().allocate(bytes);
        got2.fill((byte) 0x55);

        loop.run(new MemorySegment[] {sx, sy, sk}, new MemorySegment[] {sx, got2}, from, n);
        assertSameBits(t, sx, want1, n, "first result, over x");
        assertSameBits(t, got2.asSlice((long) from * t.byteSize()), want2.asSlice((long) from * t.byteSize()),
                n - from, "second result");
        for (int i = 0; i < from; i++) {
            assertThat(got2.get(ValueLayout.JAVA_BYTE, (long) i * t.byteSize())).as("untouched " + i)
                    .isEqualTo((byte) 0x55);
        }
    }

    /** {@code n} Gaussian values times {@code scale}, one in ten a special value instead. */
    private static double[] mostlyGaussian(Random rnd, int n, double scale) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = rnd.nextInt(10) == 0 ? SPECIAL[rnd.nextInt(SPECIAL.length)] : rnd.nextGaussian() * scale;
        }
        return out;
    }

    private static double[] filled(int n, double v) {
        double[] out = new double[n];
        Arrays.fill(out, v);
        return out;
    }

    /**
     * A range's four ways, the warm-up phase and the measuring phase of {@link VectorWarmUp} (a state of its own,
     * brought to the second phase by warm-up runs), the vector loop and the scalar loop, write the same bits, the
     * first result over its input.
     */
    @ParameterizedTest(name = "{0} n={1} from={2}")
    @MethodSource("warmUpRanges")
    void theWarmUpPhasesTheVectorAndTheScalarLoopAgree(DType t, int n, int from) {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, t);
        int y = s.element(1, t);
        int k = s.scalar(2, t);
        FusedLoop loop = FusedLoopGenerator.loop(s.spec(s.apply(ElementwiseOp.MUL, t,
                s.apply(ElementwiseOp.SUB, t, x, y), k), s.apply(ElementwiseOp.DIV, t, y, x)));
        assertThat(loop).isInstanceOf(VectorWarmUp.Paths.class);
        VectorWarmUp.Paths paths = (VectorWarmUp.Paths) loop;
        Random rnd = new Random(n + from);
        double[] xv = mostlyGaussian(rnd, n, 100);
        double[] yv = mostlyGaussian(rnd, n, 1);
        long bytes = (long) n * t.byteSize();
        MemorySegment sk = segment(t, new double[] {-0.7});
        VectorWarmUp measuring = new VectorWarmUp();
        MemorySegment scratch = Arena.ofAuto().allocate(4096L * t.byteSize());
        MemorySegment[] warmIn = {scratch, scratch, sk};
        MemorySegment[] warmOut = {scratch, scratch};
        // a range of 4096 elements makes 4096 / (2 * SLICE) warm-up calls
        for (long c = 0; c < VectorWarmUp.WARM_CALLS; c += 4096 / (2 * VectorWarmUp.SLICE)) {
            measuring.run(paths, warmIn, null, warmOut, null, 0, 4096);
        }
        List<MemorySegment[]> got = new ArrayList<>();
        for (int way = 0; way < 4; way++) {
            MemorySegment sx = segment(t, xv);
            MemorySegment[] in = {sx, segment(t, yv), sk};
            MemorySegment[] out = {sx, Arena.ofAuto().allocate(bytes)};
            switch (way) {
                case 0 -> new VectorWarmUp().run(paths, in, null, out, null, from, n);
                case 1 -> measuring.run(paths, in, null, out, null, from, n);
                case 2 -> paths.vector(in, null, out, null, from, n);
                default -> paths.scalar(in, null, out, null, from, n);
            }
            got.add(out);
        }
        for (int way = 0; way < 3; way++) {
            String name = List.of("warm-up", "measuring", "vector").get(way);
            assertSameBits(t, got.get(way)[0], got.get(3)[0], n, name + " against scalar, result over x");
            assertSameBits(t, got.get(way)[1].asSlice(from * (long) t.byteSize()),
                    got.get(3)[1].asSlice(from * (long) t.byteSize()), n - from, name + " against scalar, y / x");
        }
    }

    static Stream<Arguments> warmUpRanges() {
        return Stream.of(Arguments.of(DType.F32, 16, 0), Arguments.of(DType.F32, 4133, 3),
                Arguments.of(DType.F32, 300_007, 0), Arguments.of(DType.F64, 37, 5), Arguments.of(DType.F64, 4096, 0),
                Arguments.of(DType.F64, 200_003, 7));
    }

    /** The vector loop is ready after {@value VectorWarmUp#CONFIRM} measured ranges in a row find it no slower. */
    @Test
    void theVectorLoopIsReadyAfterMeasuredRangesInARowFindItNoSlower() {
        VectorWarmUp w = new VectorWarmUp();
        for (int i = 0; i < 10; i++) {
            w.weigh(50_000, 4096, 400_000, 61_440);
        }
        assertThat(w.vectorBelow).as("vector 12 ns per element against scalar 6.5").isEqualTo(2 * VectorWarmUp.SLICE);
        for (int i = 0; i < VectorWarmUp.CONFIRM - 1; i++) {
            w.weigh(1_000, 4096, 61_440, 61_440);
        }
        w.weigh(20_000, 4096, 61_440, 61_440);
        assertThat(w.vectorBelow).as("a slower range starts the count again").isEqualTo(2 * VectorWarmUp.SLICE);
        for (int i = 0; i < VectorWarmUp.CONFIRM - 1; i++) {
            w.weigh(4096, 4096, 61_440, 61_440);
        }
        assertThat(w.vectorBelow).isEqualTo(2 * VectorWarmUp.SLICE);
        w.weigh(4096, 4096, 61_440, 61_440);
        assertThat(w.vectorBelow).as("equal cost per element, %d times in a row", VectorWarmUp.CONFIRM)
                .isEqualTo(Long.MAX_VALUE);
    }

    /**
     * What the warm-up asks of the JIT, on a long range run by one thread: every element written once; the vector
     * loop called {@value VectorWarmUp#WARM_CALLS} times within four ranges, at most a quarter of them on elements
     * (each vector operation of those runs the Vector API's Java fallback until C2 has compiled the loop); the scalar
     * loop in short calls, whose exits the JIT sees.
     */
    @Test
    void theWarmUpCallsTheVectorLoopOftenOnFewElementsAndTheScalarLoopInShortCalls() {
        long n = 2_097_152;
        Recording r = new Recording(n);
        VectorWarmUp w = new VectorWarmUp();
        for (int range = 0; range < 4; range++) {
            r.written = new int[(int) n];
            w.run(r, null, null, null, null, 0, n);
            assertThat(r.written).as("range %d: each element once", range).containsOnly(1);
        }
        assertThat(r.vectorCalls).isGreaterThanOrEqualTo(VectorWarmUp.WARM_CALLS);
        assertThat(r.vectorElements).isLessThanOrEqualTo(r.vectorCalls / 4 * VectorWarmUp.SLICE);
        assertThat(r.longestScalar).isLessThanOrEqualTo(VectorWarmUp.PIECE);
    }

    /** A vectorized loop's two paths that count their calls and the elements they write. */
    private static final class Recording implements VectorWarmUp.Paths {
        int[] written;
        long vectorCalls;
        long vectorElements;
        long longestScalar;

        Recording(long n) {
            written = new int[(int) n];
        }

        @Override
        public void vector(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results,
                           long[] resultOffsets, long from, long to) {
            vectorCalls++;
            vectorElements += to - from;
            write(from, to);
        }

        @Override
        public void scalar(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results,
                           long[] resultOffsets, long from, long to) {
            longestScalar = Math.max(longestScalar, to - from);
            write(from, to);
        }

        private void write(long from, long to) {
            for (long i = from; i < to; i++) {
                written[(int) i]++;
            }
        }
    }

    @Test
    void heapSegmentsOfArraysWork() {
        SpecBuilder s = new SpecBuilder();
        int x = s.element(0, DType.F64);
        FusedLoop loop = FusedLoopGenerator.loop(s.spec(s.apply(ElementwiseOp.MUL, DType.F64, x,
                s.apply(ElementwiseOp.ADD, DType.F64, x, s.scalar(1, DType.F64)))));
        assertThat(FusedLoopGenerator.isVectorized(loop)).isTrue();
        double[] in = IntStream.range(0, 23).mapToDouble(i -> i - 7.5).toArray();
        double[] out = new double[23];
        loop.run(new MemorySegment[] {MemorySegment.ofArray(in), MemorySegment.ofArray(new double[] {0.25})},
                new MemorySegment[] {MemorySegment.ofArray(out)}, 0, 23);
        for (int i = 0; i < 23; i++) {
            assertThat(out[i]).as("element " + i).isEqualTo(in[i] * (in[i] + 0.25));
        }
    }

    @Test
    void otherOpsAndDtypesKeepTheScalarLoop() {
        List<FusedLoopSpec> scalar = new ArrayList<>();
        SpecBuilder sine = new SpecBuilder();
        scalar.add(sine.spec(sine.apply(ElementwiseOp.SIN, DType.F64, sine.element(0, DType.F64))));
        SpecBuilder ints = new SpecBuilder();
        scalar.add(ints.spec(ints.apply(ElementwiseOp.ADD, DType.I32, ints.element(0, DType.I32),
                ints.element(1, DType.I32))));
        SpecBuilder rem = new SpecBuilder();
        scalar.add(rem.spec(rem.apply(ElementwiseOp.REM, DType.F64, rem.element(0, DType.F64),
                rem.element(1, DType.F64))));
        SpecBuilder mixed = new SpecBuilder();
        scalar.add(mixed.spec(mixed.apply(ElementwiseOp.ADD, DType.F64, mixed.element(0, DType.F64),
                mixed.apply(ElementwiseOp.CONVERT, DType.F32, DType.F64, mixed.element(1, DType.F32)))));
        SpecBuilder where = new SpecBuilder();
        int a = where.element(0, DType.F64);
        int b = where.element(1, DType.F64);
        scalar.add(where.spec(where.select(DType.F64, where.compare(ElementwiseOp.LT, DType.F64, a, b), a, b)));
        for (FusedLoopSpec spec : scalar) {
            assertThat(VectorLoopEmitter.qualifies(spec)).as(spec.toString()).isFalse();
            assertThat(FusedLoopGenerator.isVectorized(FusedLoopGenerator.loop(spec))).as(spec.toString()).isFalse();
        }
    }

    /** The heat step, read as pieces of a padded concatenation, compiled to a vectorized loop: equal to eager. */
    @ParameterizedTest(name = "{0} {1}x{2}")
    @MethodSource("stencilShapes")
    void theHeatStencilEqualsEager(DType t, int rows, int cols) {
        Random rnd = new Random(rows * 1000L + cols);
        double[] v = new double[rows * cols];
        for (int i = 0; i < v.length; i++) {
            v[i] = rnd.nextInt(50) == 0 ? SPECIAL[rnd.nextInt(SPECIAL.length)] : rnd.nextGaussian();
        }
        Tensor u = t == DType.F64 ? Tensor.of(v, rows, cols) : Tensor.of(floats(v), rows, cols);
        Module m = (Module) Weft.lower(PiecewiseFusionTest.class, "diffuse", TensorSpec.of(t, rows, cols), 1, -0.0);
        List<Op> fusions = IrWalk.ops(m.main().body()).filter(op -> op.name().equals(StableHlo.FUSION)).toList();
        assertThat(fusions).isNotEmpty();
        for (Op f : fusions) {
            FusedLoopSpec spec = FusedLoopSpec.of(f, f.result().tensorType().shape().size(), new ArrayList<>())
                    .orElseThrow();
            assertThat(FusedLoopGenerator.isVectorized(FusedLoopGenerator.loop(spec))).as(spec.toString()).isTrue();
        }
        Tensor got = new CpuExecutable(m).run(List.of(u)).getFirst();
        Tensor want = PiecewiseFusionTest.stencil(u, -0.0);
        assertSameBits(t, TensorAccess.data(got), TensorAccess.data(want), rows * cols, "stencil");
    }

    static Stream<Arguments> stencilShapes() {
        return Stream.of(Arguments.of(DType.F64, 3, 1), Arguments.of(DType.F64, 5, 7),
                Arguments.of(DType.F64, 4, 37), Arguments.of(DType.F64, 9, 1031), Arguments.of(DType.F32, 6, 19),
                Arguments.of(DType.F32, 5, 1029));
    }

    private static float[] floats(double[] v) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) v[i];
        }
        return out;
    }

    private static MemorySegment segment(DType t, double[] v) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, (long) v.length * t.byteSize()));
        for (int i = 0; i < v.length; i++) {
            if (t == DType.F64) {
                s.setAtIndex(F64, i, v[i]);
            } else {
                s.setAtIndex(F32, i, (float) v[i]);
            }
        }
        return s;
    }

    /**
     * Equal bits, all NaNs alike: which NaN an op on two NaNs returns depends on the JIT's operand order, as the
     * other loop tests note; every other value, -0.0 included, must match exactly.
     */
    private static void assertSameBits(DType t, MemorySegment got, MemorySegment want, long n, String what) {
        for (long i = 0; i < n; i++) {
            if (t == DType.F64) {
                double g = got.getAtIndex(F64, i);
                double w = want.getAtIndex(F64, i);
                assertThat(Double.doubleToLongBits(g)).as("%s, element %d: %s vs %s", what, i, g, w)
                        .isEqualTo(Double.doubleToLongBits(w));
            } else {
                float g = got.getAtIndex(F32, i);
                float w = want.getAtIndex(F32, i);
                assertThat(Float.floatToIntBits(g)).as("%s, element %d: %s vs %s", what, i, g, w)
                        .isEqualTo(Float.floatToIntBits(w));
            }
        }
    }

}
