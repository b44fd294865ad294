package dev.weft.backends.cpu.blas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.spi.CoreShare;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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

    /**
     * A product under {@link OpenBlas#ONE_THREAD_BELOW} runs on one thread and leaves OpenBLAS at this rank's share
     * of the cores; one above it, and a small one, equal hand-computed sums (the thread count changes no result).
     */
    @Test
    void smallProductsRunOnOneThreadAndLeaveTheRanksShare() throws Throwable {
        assumeTrue(OpenBlas.isAvailable(DType.F64), "libopenblas.so.0 is not installed");
        assumeTrue(System.getenv("OPENBLAS_NUM_THREADS") == null && System.getenv("OMP_NUM_THREADS") == null
                && System.getenv("GOTO_NUM_THREADS") == null, "the user chose OpenBLAS's threads");
        MethodHandle threads = Linker.nativeLinker().downcallHandle(SymbolLookup.libraryLookup("libopenblas.so.0",
                Arena.global()).find("openblas_get_num_threads").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
        for (int n : new int[] {8, 256}) {
            assertThat((long) n * n * n < OpenBlas.ONE_THREAD_BELOW).isEqualTo(n == 8);
            double[] a = new double[n * n];
            double[] b = new double[n * n];
            for (int i = 0; i < n * n; i++) {
                a[i] = (i % 7) - 3;
                b[i] = (i % 5) - 2;
            }
            double[] c = new double[n * n];
            OpenBlas.gemm(DType.F64, MemorySegment.ofArray(a), MemorySegment.ofArray(b), MemorySegment.ofArray(c), n,
                    n, n);
            for (int i = 0; i < n; i += n / 4) {
                for (int j = 0; j < n; j += n / 4) {
                    double sum = 0;
                    for (int k = 0; k < n; k++) {
                        sum += a[i * n + k] * b[k * n + j];
                    }
                    assertThat(c[i * n + j]).as("c[%d][%d] of %d x %d", i, j, n, n).isEqualTo(sum);
                }
            }
            assertThat((int) threads.invokeExact()).isEqualTo(CoreShare.CORES);
        }
    }
}
