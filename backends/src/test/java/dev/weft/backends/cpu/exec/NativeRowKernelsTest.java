package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.DataMovement;
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
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Native row folds ({@link NativeRowKernels}) give the {@link Reductions} kernel's bits for every operator and
 * floating dtype, on row lengths around the 8 lanes, long rows (folded in pieces), many short rows, and values where
 * the order of operations shows (mixed magnitudes, NaN, signed zeros, infinities); a call the native code cannot
 * check does nothing and says so. Native repeats give {@link DataMovement#broadcastInDim}'s bytes for every element
 * size, and the broadcasts a compiled program hands them are exactly those along the last axis. Needs a C compiler
 * ({@code cc}); skipped without one.
 */
class NativeRowKernelsTest {
    private static final long[][] SHAPES = {
        {1, 1}, {1, 7}, {1, 8}, {1, 9}, {1, 17}, {3, 10}, {128, 10}, {5, 1000}, {1, 100_003}, {0, 4},
        // rows split over calls, and rows each folded in pieces with their lanes carried between calls
        {5, NativeRowKernels.SAFEPOINT_ELEMENTS / 2 - 3}, {2, NativeRowKernels.SAFEPOINT_ELEMENTS * 2 + 13}
    };

    private static NativeRowKernels kernels;

    @BeforeAll
    static void loadTheLibrary() throws Exception {
        assumeTrue(NativeLoops.hasCompiler(), "no C compiler");
        kernels = NativeRowKernels.prepare();
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
                assertThat(kernels.fold(r, t, in, c, rows, length)).as("ran native").isTrue();
                assertThat(bits(t, c, rows)).as("%s %s %s rows of %s%s", r, t, rows, length,
                        special ? " with NaN, signed zeros and infinities" : "").isEqualTo(bits(t, kernel, rows));
            }
        }
    }

    @Test
    void aCallTheNativeCodeCannotCheckDoesNothing() {
        MemorySegment in = values(DType.F32, 40, false, 1);
        MemorySegment out = start(DType.F32, 4);
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, MemorySegment.ofArray(new float[40]), out, 4, 10))
                .as("heap input").isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, in, out.asReadOnly(), 4, 10)).as("read-only")
                .isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, in, out, 4, 11)).as("input too short").isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, in, out, 5, 8)).as("output too short").isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, in.asSlice(2), out, 3, 10)).as("misaligned")
                .isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.F32, in, out, Long.MAX_VALUE / 2, 4)).as("overflow")
                .isFalse();
        assertThat(kernels.fold(ElementwiseOp.ADD, DType.I32, in, out, 4, 10)).as("integers").isFalse();
        assertThat(out.toArray(ValueLayout.JAVA_FLOAT)).containsOnly(0.5f);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DType.class)
    void everyRepeatGivesTheKernelsBytes(DType t) {
        int es = (int) t.byteSize();
        long[][] shapes = {{1, 2}, {3, 10}, {128, 10}, {5, 1000}, {0, 4}, {2, NativeRowKernels.SAFEPOINT_ELEMENTS + 13},
            {NativeRowKernels.SAFEPOINT_ELEMENTS / 3 + 1, 3}};
        for (long[] shape : shapes) {
            long rows = shape[0], length = shape[1];
            MemorySegment in = Arena.ofAuto().allocate(Math.max(1, rows) * es, 64);
            Random random = new Random(rows * 31 + length);
            for (long i = 0; i < rows * es; i++) {
                in.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
            }
            MemorySegment kernel = Arena.ofAuto().allocate(Math.max(1, rows * length) * es, 64);
            MemorySegment c = Arena.ofAuto().allocate(Math.max(1, rows * length) * es, 64);
            DataMovement.broadcastInDim(t, in, new long[] {rows}, new int[] {0}, new long[] {rows, length}, kernel);
            assertThat(kernels.repeat(in, c, rows, length, es)).as("ran native").isTrue();
            assertThat(c.mismatch(kernel)).as("%s: %d rows of %d", t, rows, length).isEqualTo(-1);
        }
    }

    @Test
    void aRepeatTheNativeCodeCannotCheckDoesNothing() {
        MemorySegment in = Arena.ofAuto().allocate(16, 8);
        MemorySegment out = Arena.ofAuto().allocate(4 * 10 * 4, 8);
        out.fill((byte) 7);
        assertThat(kernels.repeat(MemorySegment.ofArray(new int[4]), out, 4, 10, 4)).as("heap input").isFalse();
        assertThat(kernels.repeat(in, out.asReadOnly(), 4, 10, 4)).as("read-only").isFalse();
        assertThat(kernels.repeat(in, out, 5, 8, 4)).as("input too short").isFalse();
        assertThat(kernels.repeat(in, out, 4, 11, 4)).as("output too short").isFalse();
        assertThat(kernels.repeat(in.asSlice(2), out, 3, 10, 4)).as("misaligned").isFalse();
        assertThat(kernels.repeat(in, out, 2, Long.MAX_VALUE / 2, 4)).as("overflow").isFalse();
        assertThat(kernels.repeat(in, out, 4, 10, 2)).as("no such element size").isFalse();
        assertThat(out.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 7);
    }

    @Test
    void aBroadcastRepeatsRowsWhenItsLastAxisIsNewOrOfOneAndTheRestIsTheInputInOrder() {
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {128}, new int[] {0}, 2),
                new long[] {128, 10})).containsExactly(128, 10);
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {128, 1}, new int[] {0, 1}, 2),
                new long[] {128, 10})).containsExactly(128, 10);
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {4, 5}, new int[] {0, 1}, 3),
                new long[] {4, 5, 6})).containsExactly(20, 6);
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {4}, new int[] {1}, 3),
                new long[] {1, 4, 6})).containsExactly(4, 6);
        // along the leading axis, transposed, a scalar, an axis repeated before the last, nothing repeated
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {10}, new int[] {1}, 2),
                new long[] {128, 10})).isNull();
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {4, 5}, new int[] {1, 0}, 3),
                new long[] {5, 4, 6})).isNull();
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {}, new int[] {}, 2),
                new long[] {3, 6})).isNull();
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {4}, new int[] {0}, 3),
                new long[] {4, 3, 6})).isNull();
        assertThat(OpCompilers.rowRepeat(DataMovement.broadcastStrides(new long[] {4, 6}, new int[] {0, 1}, 2),
                new long[] {4, 6})).isNull();
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
