package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated loops read and write at byte offsets and walk rows ({@link FusedLoop#run} with offsets,
 * {@link FusedLoop#runRows}): a strided layout with negative offsets gives bit for bit what the same loop gives on
 * compact copies, and writes nothing outside its rows and columns. For each kind of generated loop: vector, scalar
 * and blocked, over short and long rows.
 */
class FusedLoopOffsetsTest {
    private static final int ROWS = 4;
    /** Input 0's rows are this many elements longer than the fused row, the result's one longer. */
    private static final int IN_PAD = 3;
    private static final int FROM = 3;

    static Stream<Arguments> loops() {
        return Stream.of(5, 70).flatMap(width -> Stream.of(
                Arguments.of("vector f64", DType.F64, width),
                Arguments.of("scalar i32", DType.I32, width),
                Arguments.of("blocked f32", DType.F32, width)));
    }

    /** {@code a - b * k} (vector f64), {@code a * b + a} (i32, scalar), {@code sin(a) + b} (f32, blocked). */
    private static FusedLoop loop(DType t) {
        SpecBuilder s = new SpecBuilder();
        int a = s.element(0, t);
        int b = s.element(1, t);
        FusedLoopSpec spec = switch (t) {
            case F64 -> s.spec(s.apply(ElementwiseOp.SUB, t, a, s.apply(ElementwiseOp.MUL, t, b, s.scalar(2, t))));
            case I32 -> s.spec(s.apply(ElementwiseOp.ADD, t, s.apply(ElementwiseOp.MUL, t, a, b), a));
            default -> s.spec(s.apply(ElementwiseOp.ADD, t, s.apply(ElementwiseOp.SIN, t, a), b));
        };
        FusedLoop loop = FusedLoopGenerator.loop(spec);
        assertThat(FusedLoopGenerator.isVectorized(loop)).isEqualTo(t == DType.F64);
        assertThat(BlockedLoopPlan.of(spec).isPresent()).isEqualTo(t == DType.F32);
        return loop;
    }

    @ParameterizedTest(name = "{0}, rows of {2}")
    @MethodSource("loops")
    void stridedRowsAtOffsetsEqualCompactCopies(String kind, DType t, int width) {
        FusedLoop loop = loop(t);
        long es = t.byteSize();
        Random rnd = new Random(width);
        // input 0: ROWS rows of width + IN_PAD from element 2; input 1: one row read by every row, shifted right by
        // FROM (so its offset is negative); the result: rows of width + 1 from element 1
        MemorySegment a = random(t, 2 + (long) ROWS * (width + IN_PAD), rnd);
        MemorySegment b = random(t, width - FROM, rnd);
        MemorySegment k = random(t, 1, rnd);
        MemorySegment out = Arena.ofAuto().allocate(es * (1 + (long) ROWS * (width + 1)));
        out.fill((byte) 0x5a);
        MemorySegment before = Arena.ofAuto().allocate(out.byteSize()).copyFrom(out);
        loop.runRows(new MemorySegment[] {a, b, k}, new long[] {2 * es, -FROM * es, 0},
                new long[] {(width + IN_PAD) * es, 0, 0}, new MemorySegment[] {out}, new long[] {es},
                new long[] {(width + 1) * es}, ROWS, FROM, width);
        for (int r = 0; r < ROWS; r++) {
            MemorySegment ca = Arena.ofAuto().allocate(width * es);
            MemorySegment.copy(a, (2 + (long) r * (width + IN_PAD)) * es, ca, 0, width * es);
            MemorySegment cb = Arena.ofAuto().allocate(width * es);
            MemorySegment.copy(b, 0, cb, FROM * es, (width - FROM) * es);
            MemorySegment want = Arena.ofAuto().allocate(width * es);
            loop.run(new MemorySegment[] {ca, cb, k}, new MemorySegment[] {want}, FROM, width);
            long rowStart = (1 + (long) r * (width + 1)) * es;
            assertThat(hex(out, rowStart + FROM * es, (width - FROM) * es)).as("row %d", r)
                    .isEqualTo(hex(want, FROM * es, (width - FROM) * es));
            assertThat(hex(out, rowStart, FROM * es)).as("row %d before its columns", r)
                    .isEqualTo(hex(before, rowStart, FROM * es));
            assertThat(hex(out, rowStart + width * es, es)).as("row %d after its columns", r)
                    .isEqualTo(hex(before, rowStart + width * es, es));
        }
        assertThat(hex(out, 0, es)).as("before the first row").isEqualTo(hex(before, 0, es));
    }

    private static MemorySegment random(DType t, long n, Random rnd) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, n) * t.byteSize());
        for (long i = 0; i < n; i++) {
            switch (t) {
                case F64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, rnd.nextGaussian() * 10);
                case F32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) (rnd.nextGaussian() * 10));
                default -> s.setAtIndex(ValueLayout.JAVA_INT, i, rnd.nextInt(2001) - 1000);
            }
        }
        return s;
    }

    private static String hex(MemorySegment s, long offset, long bytes) {
        return HexFormat.of().formatHex(s.asSlice(offset, bytes).toArray(ValueLayout.JAVA_BYTE));
    }
}
