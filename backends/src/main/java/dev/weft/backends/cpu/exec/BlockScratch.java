package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.FloatMathBlock;
import java.util.Arrays;

/**
 * A thread's arrays of one block ({@link FloatMathBlock#SIZE} elements) for blocked fused loops
 * ({@link BlockedLoopPlan}), kept from call to call: allocating and zeroing them per call would cost as much as
 * the SIMD kernels save on a row of a few hundred elements. A loop takes its arrays at the start of a call and
 * calls no other loop before it returns, so one set per thread suffices.
 */
final class BlockScratch {
    private static final ThreadLocal<BlockScratch> LOCAL = ThreadLocal.withInitial(BlockScratch::new);

    /** Per dtype, the arrays handed out so far. */
    private final Object[][] arrays = new Object[DType.values().length][0];

    private BlockScratch() {
    }

    /** This thread's arrays. */
    static BlockScratch local() {
        return LOCAL.get();
    }

    /**
     * Array {@code index} of {@code t} values: a {@code float[]}, {@code double[]}, {@code int[]}, {@code long[]}
     * or {@code byte[]}.
     */
    Object array(DType t, int index) {
        Object[] ofType = arrays[t.ordinal()];
        if (index >= ofType.length) {
            ofType = Arrays.copyOf(ofType, index + 1);
            arrays[t.ordinal()] = ofType;
        }
        if (ofType[index] == null) {
            ofType[index] = switch (t) {
                case F32 -> new float[FloatMathBlock.SIZE];
                case F64 -> new double[FloatMathBlock.SIZE];
                case I32 -> new int[FloatMathBlock.SIZE];
                case I64 -> new long[FloatMathBlock.SIZE];
                case BOOL -> new byte[FloatMathBlock.SIZE];
            };
        }
        return ofType[index];
    }
}
