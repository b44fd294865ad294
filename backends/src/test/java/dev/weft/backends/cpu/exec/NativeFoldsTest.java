package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.Reductions;
import dev.weft.backends.cpu.kernels.Scalars;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Native row folds ({@link NativeFolds}) give the {@link Reductions} kernel's bits for every operator and floating
 * dtype, on row lengths around the 8 lanes, long rows (folded in pieces), many short rows, and values where the order of operations
 * shows (mixed magnitudes, NaN, signed zeros, infinities); a call the native code cannot check does nothing and says
 * so. Needs a C compiler ({@code cc}); skipped without one.
 */
class NativeFoldsTest {
    private static final long[][] SHAPES = {
        {1, 1}, {1, 7}, {1, 8}, {1, 9}, {1, 17}, {3, 10}, {128, 10}, {5, 1000}, {1, 100_003}, {0, 4},
        // rows split over calls, and rows each folded in pieces with their lanes carried between calls
        {5, NativeFolds.SAFEPOINT_ELEMENTS / 2 - 3}, {2, NativeFolds.SAFEPOINT_ELEMENTS * 2 + 13}
    };

    private static NativeFolds folds;

    @BeforeAll
    static void loadTheFolds() throws Exception {
        assumeTrue(NativeLoops.hasCompiler(), "no C compiler");
        folds = NativeFolds.prepare();
        NativeLoops.awaitBackground();
    }

    static Stream<Arguments> opsAndDtypes() {
        return Stream.of(ElementwiseOp.ADD, ElementwiseOp.MUL, ElementwiseOp.MAX, ElementwiseOp.MIN)
                .flatMap(r -> Stream.of(Arguments.of(r, DType.F32), Arguments.of(r, DType.F64)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("opsAndDtypes")
    void everyFoldGivesTheKernelsBits(ElementwiseOp r, DType t) {
        for (boolean special : new boolean[] {false, true}) {
            for (long[] shape : SHAPES) {
                long rows = shape[0], length = shape[1];
                MemorySegment in = values(t, rows * length, special, (int) (rows * 31 + length));
                MemorySegment kernel = start(t, rows);
                MemorySegment c = start(t, rows);
                Reductions.accumulate(r, t, in, new long[] {rows, length}, new int[] {1}, kernel);
                assertThat(folds.run(r, t, in, c, rows, length)).as("ran native").isTrue();
                assertThat(bits(t, c, rows)).as("%s %s %s rows of %s%s", r, t, rows, length,
                        special ? " with NaN, signed zeros and infinities" : "").isEqualTo(bits(t, kernel, rows));
            }
        }
    }

    @Test
    void aCallTheNativeCodeCannotCheckDoesNothing() {
        MemorySegment in = values(DType.F32, 40, false, 1);
        MemorySegment out = start(DType.F32, 4);
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, MemorySegment.ofArray(new float[40]), out, 4, 10))
                .as("heap input").isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, in, out.asReadOnly(), 4, 10)).as("read-only")
                .isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, in, out, 4, 11)).as("input too short").isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, in, out, 5, 8)).as("output too short").isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, in.asSlice(2), out, 3, 10)).as("misaligned")
                .isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.F32, in, out, Long.MAX_VALUE / 2, 4)).as("overflow")
                .isFalse();
        assertThat(folds.run(ElementwiseOp.ADD, DType.I32, in, out, 4, 10)).as("integers").isFalse();
        assertThat(out.toArray(ValueLayout.JAVA_FLOAT)).containsOnly(0.5f);
    }

    /**
     * Each element's bits, every NaN as the canonical one: which NaN a sum of NaNs and opposite infinities gives
     * depends on the order of each addition's operands, which neither Java nor C fixes.
     */
    private static long[] bits(DType t, MemorySegment s, long rows) {
        long[] b = new long[(int) rows];
        for (int i = 0; i < rows; i++) {
            b[i] = t == DType.F32 ? Float.floatToIntBits(s.getAtIndex(ValueLayout.JAVA_FLOAT, i))
                    : Double.doubleToLongBits(s.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
        }
        return b;
    }

    /** Mixed magnitudes and signs (so that any other order of additions changes low bits), or special values. */
    private static MemorySegment values(DType t, long n, boolean special, int seed) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, n) * t.byteSize(), 64);
        Random random = new Random(seed);
        double[] specials = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e30, -1e-30};
        for (long i = 0; i < n; i++) {
            double v = special && random.nextInt(5) == 0 ? specials[random.nextInt(specials.length)]
                    : random.nextGaussian() * Math.pow(10, random.nextInt(9) - 4);
            Scalars.setDouble(t, s, i, v);
        }
        return s;
    }

    private static MemorySegment start(DType t, long rows) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, rows) * t.byteSize(), 64);
        for (long i = 0; i < rows; i++) {
            Scalars.setDouble(t, s, i, 0.5);
        }
        return s;
    }
}
