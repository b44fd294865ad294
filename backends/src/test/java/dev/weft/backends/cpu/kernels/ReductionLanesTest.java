package dev.weft.backends.cpu.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Floating reductions fold in lanes ({@link Reductions#LANES}): a run folded in pieces ({@link RunFold}, as a fused
 * reduction feeds it) gives bit for bit the whole run's result ({@link Reductions#accumulate}); sums are checked
 * against the exact sum, and max/min against a sequential fold, with NaN and signed zeros.
 */
class ReductionLanesTest {
    private static final ElementwiseOp[] OPS = {ElementwiseOp.ADD, ElementwiseOp.MUL, ElementwiseOp.MAX,
        ElementwiseOp.MIN};

    @Test
    void aRunFoldedInPiecesEqualsTheWholeRun() {
        Random random = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                for (ElementwiseOp r : OPS) {
                    for (int n = 1; n <= 41; n += 4) {
                        MemorySegment in = values(arena, t, n, random, r == ElementwiseOp.MUL);
                        double whole = reduce(arena, r, t, in, n, 0.5);
                        RunFold fold = new RunFold(r, t);
                        for (int from = 0; from < n; ) {
                            int piece = Math.min(n - from, 1 + random.nextInt(11));
                            fold.add(in, from, piece);
                            from += piece;
                        }
                        MemorySegment out = scalar(arena, t, 0.5);
                        fold.finish(out, 0);
                        assertEquals(whole, read(t, out), 0.0, r + " " + t + " of " + n);
                    }
                }
            }
        }
    }

    @Test
    void largeSumsMatchTheExactSum() {
        Random random = new Random(11);
        int n = 1 << 20;
        try (Arena arena = Arena.ofConfined()) {
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                MemorySegment in = values(arena, t, n, random, false);
                BigDecimal exact = BigDecimal.ZERO;
                for (int i = 0; i < n; i++) {
                    exact = exact.add(new BigDecimal(get(t, in, i)));
                }
                double sum = reduce(arena, ElementwiseOp.ADD, t, in, n, 0);
                double expected = t == DType.F32 ? exact.floatValue() : exact.doubleValue();
                double error = Math.abs(sum - expected) / Math.abs(exact.round(MathContext.DECIMAL64).doubleValue());
                // f32: accumulated in double, so the exactly rounded f32 sum; f64: within a few units of rounding
                assertTrue(t == DType.F32 ? sum == expected : error < 1e-13, t + ": " + sum + " against " + exact);
            }
        }
    }

    @Test
    void maxAndMinEqualASequentialFold() {
        Random random = new Random(3);
        try (Arena arena = Arena.ofConfined()) {
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                int n = 1000;
                MemorySegment in = values(arena, t, n, random, false);
                double max = Double.NEGATIVE_INFINITY;
                double min = Double.POSITIVE_INFINITY;
                for (int i = 0; i < n; i++) {
                    max = Math.max(max, get(t, in, i));
                    min = Math.min(min, get(t, in, i));
                }
                assertEquals(max, reduce(arena, ElementwiseOp.MAX, t, in, n, Double.NEGATIVE_INFINITY), 0.0);
                assertEquals(min, reduce(arena, ElementwiseOp.MIN, t, in, n, Double.POSITIVE_INFINITY), 0.0);
                set(t, in, 517, Double.NaN);
                for (ElementwiseOp r : OPS) {
                    assertTrue(Double.isNaN(reduce(arena, r, t, in, n, 1)), r + " " + t + " propagates NaN");
                }
            }
        }
    }

    @Test
    void aSumOfNegativeZerosIsNegativeZero() {
        try (Arena arena = Arena.ofConfined()) {
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                for (int n : new int[] {1, 8, 19}) {
                    MemorySegment in = arena.allocate(n * t.byteSize(), 8);
                    for (int i = 0; i < n; i++) {
                        set(t, in, i, -0.0);
                    }
                    double sum = reduce(arena, ElementwiseOp.ADD, t, in, n, -0.0);
                    assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(sum), t + " of " + n);
                }
            }
        }
    }

    /** {@code r} over all {@code n} elements of {@code in}, combined with the initial value {@code init}. */
    private static double reduce(Arena arena, ElementwiseOp r, DType t, MemorySegment in, int n, double init) {
        MemorySegment out = scalar(arena, t, init);
        Reductions.accumulate(r, t, in, new long[] {n}, new int[] {0}, out);
        return read(t, out);
    }

    private static MemorySegment values(Arena arena, DType t, int n, Random random, boolean nearOne) {
        MemorySegment in = arena.allocate(n * t.byteSize(), 8);
        for (int i = 0; i < n; i++) {
            set(t, in, i, nearOne ? 0.75 + random.nextDouble() / 2 : (random.nextDouble() - 0.3) * 1000);
        }
        return in;
    }

    private static MemorySegment scalar(Arena arena, DType t, double v) {
        MemorySegment out = arena.allocate(t.byteSize(), 8);
        set(t, out, 0, v);
        return out;
    }

    private static double read(DType t, MemorySegment s) {
        return get(t, s, 0);
    }

    private static double get(DType t, MemorySegment s, long i) {
        return t == DType.F32 ? s.getAtIndex(ValueLayout.JAVA_FLOAT, i) : s.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
    }

    private static void set(DType t, MemorySegment s, long i, double v) {
        if (t == DType.F32) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
        } else {
            s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
        }
    }
}
