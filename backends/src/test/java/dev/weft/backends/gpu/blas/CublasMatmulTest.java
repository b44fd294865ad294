package dev.weft.backends.gpu.blas;

import dev.weft.DType;
import dev.weft.backends.gpu.NativeStub;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CublasMatmul} against the cuBLAS stub: the arguments of each cuBLAS call, and what they compute. */
class CublasMatmulTest {
    private NativeStub stub;
    private CublasLibrary cublas;

    @BeforeEach
    void load() {
        stub = NativeStub.build("cublas_stub.c", "libcublas.so.12");
        stub.reset();
        cublas = CublasLibrary.load(List.of(stub.file.toString()));
    }

    @Test
    void oneProductIsTheTransposedColumnMajorGemm() {
        try (CublasMatmul mm = new CublasMatmul(cublas)) {
            mm.gemm(77, DType.F32, 2, 5, 3, 1000, 2000, 3000, 1);
            mm.gemm(77, DType.F32, 4, 1, 6, 1000, 2000, 3000, 1);
            mm.gemm(78, DType.F64, 4, 1, 6, 1000, 2000, 3000, 1);
        }
        assertThat(stub.calls()).containsExactly(
                "cublasCreate_v2",
                "cublasSetStream_v2 ok=1 stream=77",
                "cublasSgemm_v2 ok=1 transa=0 transb=0 m=5 n=2 k=3 alpha=1 A=2000 lda=5 B=1000 ldb=3 beta=0 C=3000 ldc=5",
                "cublasSgemm_v2 ok=1 transa=0 transb=0 m=1 n=4 k=6 alpha=1 A=2000 lda=1 B=1000 ldb=6 beta=0 C=3000 ldc=1",
                "cublasSetStream_v2 ok=1 stream=78",
                "cublasDgemm_v2 ok=1 transa=0 transb=0 m=1 n=4 k=6 alpha=1 A=2000 lda=1 B=1000 ldb=6 beta=0 C=3000 ldc=1",
                "cublasDestroy_v2 ok=1");
    }

    @Test
    void batchesUseStridedBatchedGemm() {
        try (CublasMatmul mm = new CublasMatmul(cublas)) {
            mm.gemm(5, DType.F64, 2, 5, 3, 1000, 2000, 3000, 4);
            mm.gemm(5, DType.F32, 2, 5, 3, 1000, 2000, 3000, 2);
        }
        assertThat(stub.calls()).containsSubsequence(
                "cublasDgemmStridedBatched ok=1 transa=0 transb=0 m=5 n=2 k=3 alpha=1 A=2000 lda=5 strideA=15"
                        + " B=1000 ldb=3 strideB=6 beta=0 C=3000 ldc=5 strideC=10 batch=4",
                "cublasSgemmStridedBatched ok=1 transa=0 transb=0 m=5 n=2 k=3 alpha=1 A=2000 lda=5 strideA=15"
                        + " B=1000 ldb=3 strideB=6 beta=0 C=3000 ldc=5 strideC=10 batch=2");
    }

    /**
     * Replays the recorded strided-batched call with a textbook column-major GEMM over row-major data and
     * compares with a row-major product computed directly.
     */
    @Test
    void theRecordedCallComputesTheRowMajorProduct() {
        int m = 3, n = 4, k = 2, batch = 2;
        double[] memory = new double[batch * (m * k + k * n + m * n)];
        long a = 0, b = (long) batch * m * k, c = b + (long) batch * k * n;
        for (int i = 0; i < c; i++) {
            memory[i] = (i * 7 % 11) - 5;
        }
        try (CublasMatmul mm = new CublasMatmul(cublas)) {
            mm.gemm(1, DType.F64, m, n, k, a, b, c, batch);
        }
        Map<String, Long> call = fields(stub.calls().stream()
                .filter(l -> l.startsWith("cublasDgemmStridedBatched")).findFirst().orElseThrow());
        for (int p = 0; p < call.get("batch"); p++) {
            long pa = call.get("A") + p * call.get("strideA");
            long pb = call.get("B") + p * call.get("strideB");
            long pc = call.get("C") + p * call.get("strideC");
            for (int col = 0; col < call.get("n"); col++) {
                for (int row = 0; row < call.get("m"); row++) {
                    double sum = 0;
                    for (int l = 0; l < call.get("k"); l++) {
                        sum += memory[(int) (pa + row + l * call.get("lda"))]
                                * memory[(int) (pb + l + col * call.get("ldb"))];
                    }
                    memory[(int) (pc + row + col * call.get("ldc"))] = sum;
                }
            }
        }
        for (int p = 0; p < batch; p++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double expected = 0;
                    for (int l = 0; l < k; l++) {
                        expected += memory[(int) a + p * m * k + i * k + l] * memory[(int) b + p * k * n + l * n + j];
                    }
                    assertThat(memory[(int) c + p * m * n + i * n + j]).as("C[%d][%d][%d]", p, i, j)
                            .isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void errorsNameTheFunctionAndStatus() {
        try (CublasMatmul mm = new CublasMatmul(cublas)) {
            stub.fail("cublasSgemm_v2", 13);
            assertThatThrownBy(() -> mm.gemm(1, DType.F32, 2, 2, 2, 1, 2, 3, 1))
                    .isInstanceOf(CublasLibrary.CublasException.class)
                    .hasMessage("cublasSgemm_v2 failed: CUBLAS_STATUS_EXECUTION_FAILED (13)");
            assertThatThrownBy(() -> mm.gemm(1, DType.I32, 2, 2, 2, 1, 2, 3, 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("cuBLAS gemm supports f32 and f64, not i32");
        }
        stub.fail("cublasCreate_v2", 3);
        assertThatThrownBy(() -> new CublasMatmul(cublas))
                .hasMessage("cublasCreate_v2 failed: CUBLAS_STATUS_ALLOC_FAILED (3)");
    }

    @Test
    void loadingTakesTheFirstLibraryThatExists() {
        assertThat(CublasLibrary.load(List.of("libcublas.so.99", stub.file.toString())))
                .hasToString(stub.file.toString());
        assertThatThrownBy(() -> CublasLibrary.load(List.of("libcublas.so.98", "libcublas.so.99")))
                .hasMessageStartingWith("no cuBLAS library could be loaded: libcublas.so.98: ")
                .hasMessageContaining("; libcublas.so.99: ")
                .hasMessageContaining("weft.cublas.lib");
        assertThat(CublasLibrary.DEFAULT_NAMES)
                .containsExactly("libcublas.so.13", "libcublas.so.12", "libcublas.so.11");
    }

    /**
     * cuBLAS 13 beside 12 on a CUDA 12 driver: .13 loads but cannot create a handle. The next library is tried
     * instead of giving up on cuBLAS.
     */
    @Test
    void aLibraryThatCannotCreateAHandleFallsBackToTheNext() {
        NativeStub newer = NativeStub.build("cublas_stub.c", "libcublas.so.13");
        newer.reset();
        newer.fail("cublasCreate_v2", 3);
        try (CublasMatmul mm = CublasMatmul.open(List.of(newer.file.toString(), stub.file.toString()))) {
            assertThat(mm.library()).hasToString(stub.file.toString());
        }
        assertThat(newer.calls()).containsExactly("cublasCreate_v2");
        assertThat(stub.calls()).containsExactly("cublasCreate_v2", "cublasDestroy_v2 ok=1");

        newer.fail("cublasCreate_v2", 3);
        assertThatThrownBy(() -> CublasMatmul.open(List.of("libcublas.so.98", newer.file.toString())))
                .hasMessageStartingWith("no cuBLAS library could be used: libcublas.so.98: ")
                .hasMessageContaining("; " + newer.file + ": cublasCreate_v2 failed: CUBLAS_STATUS_ALLOC_FAILED (3)")
                .hasMessageContaining("weft.cublas.lib");
    }

    private static Map<String, Long> fields(String line) {
        Map<String, Long> f = new HashMap<>();
        for (String kv : line.split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && !kv.startsWith("alpha") && !kv.startsWith("beta")) {
                f.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
            }
        }
        return f;
    }
}
