package dev.weft.backends.comm;

import dev.weft.DType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;

class RuntimeReduceOpTest {
    @Test
    void builtinsCombineElementwiseOnEveryNumericDType() {
        for (DType t : new DType[] {DType.F32, DType.F64, DType.I32, DType.I64}) {
            assertThat(combine(RuntimeReduceOp.SUM, t)).as("SUM %s", t).containsExactly(-1, 7, 0);
            assertThat(combine(RuntimeReduceOp.PROD, t)).as("PROD %s", t).containsExactly(-6, 12, -9);
            assertThat(combine(RuntimeReduceOp.MIN, t)).as("MIN %s", t).containsExactly(-3, 3, -3);
            assertThat(combine(RuntimeReduceOp.MAX, t)).as("MAX %s", t).containsExactly(2, 4, 3);
        }
    }

    /** {@code in = [2, 3, -3]}, {@code inout = [-3, 4, 3]}. */
    private static double[] combine(RuntimeReduceOp op, DType t) {
        MemorySegment inout = of(t, -3, 4, 3);
        op.combine(inout, of(t, 2, 3, -3), 3, t);
        return read(inout, t, 3);
    }

    @Test
    void integerSumWrapsAround() {
        MemorySegment inout = of(DType.I32, Integer.MAX_VALUE);
        RuntimeReduceOp.SUM.combine(inout, of(DType.I32, 1), 1, DType.I32);
        assertThat(read(inout, DType.I32, 1)).containsExactly(Integer.MIN_VALUE);
    }

    @Test
    void builtinsRejectBoolWhileCustomOpsAcceptEveryDType() {
        assertThat(RuntimeReduceOp.MAX.supports(DType.BOOL)).isFalse();
        assertThat(RuntimeReduceOp.SUM.supports(DType.F32)).isTrue();
        RuntimeReduceOp keepRight = RuntimeReduceOp.custom("keepRight", (inout, in, count, dtype) -> { });
        assertThat(keepRight.supports(DType.BOOL)).isTrue();
        assertThat(keepRight.name()).isEqualTo("keepRight");
        assertThat(RuntimeReduceOp.SUM.name()).isEqualTo("SUM");
    }
}
