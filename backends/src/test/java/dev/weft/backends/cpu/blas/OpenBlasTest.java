package dev.weft.backends.cpu.blas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class OpenBlasTest {
    @Test
    void sgemmOfHeapAndNativeSegmentsMatchesHandProducts() {
        assumeTrue(OpenBlas.isAvailable(DType.F32), "libopenblas.so.0 is not installed");
        MemorySegment a = MemorySegment.ofArray(new float[] {1, 2, 3, 4, 5, 6});
        MemorySegment b = Arena.ofAuto().allocate(6 * 4L).copyFrom(MemorySegment.ofArray(new float[] {
                7, 8, 9, 10, 11, 12}));
        float[] c = new float[4];
        OpenBlas.gemm(DType.F32, a, b, MemorySegment.ofArray(c), 2, 3, 2);
        assertThat(c).containsExactly(58, 64, 139, 154);
        assertThat(OpenBlas.implementation()).isEqualTo("openblas");
    }

    @Test
    void dgemmWithAnEmptyContractionIsZero() {
        assumeTrue(OpenBlas.isAvailable(DType.F64), "libopenblas.so.0 is not installed");
        MemorySegment c = Arena.ofAuto().allocate(4 * 8L).fill((byte) 0x7f);
        OpenBlas.gemm(DType.F64, MemorySegment.ofArray(new double[0]), MemorySegment.ofArray(new double[0]), c, 2, 0,
                2);
        assertThat(c.toArray(ValueLayout.JAVA_DOUBLE)).containsExactly(0, 0, 0, 0);
    }
}
