package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The GPU executor on {@link RecordingCuda}, without a device: every transfer is queued on the executor's stream
 * and read after that stream is synchronised, and everything it allocates is released.
 */
class GpuExecutableOnRecordingCudaTest {
    private static final String STREAM = "stream=7001";

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static GpuExecutable executable(RecordingCuda cuda, String method, Object... args) {
        return new GpuExecutable((Module) Weft.lower("gpu", Programs.class, method, args), CommBindings.NONE, cuda,
                List.of());
    }

    /** A reshape runs no kernel: the result is the argument's buffer, so its bytes make the round trip. */
    @Test
    void argumentsAndResultsTravelOnTheExecutorsStreamAndAreReadAfterItsSync() {
        RecordingCuda cuda = new RecordingCuda();
        try (GpuExecutable exe = executable(cuda, "flatten", TensorSpec.of(DType.F32, 2, 3))) {
            Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
            for (int run = 0; run < 2; run++) {
                assertThat(exe.run(List.of(x)).getFirst().toFloatArray()).containsExactly(1, 2, 3, 4, 5, 6);
            }
        }
        long a = 1L << 32;
        assertThat(cuda.lines()).containsExactly(
                "stream create 7001", "module load", "sync 7001",
                "current", "alloc 256 -> " + a, "h2d 24 -> " + a + " " + STREAM, "d2h " + a + " -> 24 " + STREAM,
                "sync 7001",
                "current", "h2d 24 -> " + a + " " + STREAM, "d2h " + a + " -> 24 " + STREAM, "sync 7001",
                "current", "sync 7001", "free " + a, "module unload", "stream destroy 7001");
    }

    /**
     * Every wait for the stream is counted: one when built (constants), one per run for its results, one per
     * predicate read; a {@code Weft.fori} adds none, a conditional inside it one per step.
     */
    @Test
    void hostSynchronisationsCountEveryStreamSyncAndNoneForAForiLoop() {
        RecordingCuda cuda = new RecordingCuda();
        try (GpuExecutable exe = executable(cuda, "iterate", TensorSpec.of(DType.F32, 5), 50)) {
            long built = exe.hostSynchronisations();
            assertThat(built).isEqualTo(syncs(cuda));
            exe.run(List.of(Tensor.zeros(DType.F32, 5)));
            assertThat(exe.hostSynchronisations()).isEqualTo(built + 1).isEqualTo(syncs(cuda));
        }
        RecordingCuda withCond = new RecordingCuda();
        try (GpuExecutable exe = executable(withCond, "loop", TensorSpec.of(DType.F32, 5), 7)) {
            long built = exe.hostSynchronisations();
            exe.run(List.of(Tensor.zeros(DType.F32, 5)));
            assertThat(exe.hostSynchronisations()).isEqualTo(built + 1 + 7).isEqualTo(syncs(withCond));
        }
    }

    private static long syncs(RecordingCuda cuda) {
        return cuda.lines().stream().filter(l -> l.startsWith("sync ")).count();
    }

    @Test
    void constantsAreUploadedOnTheStreamBeforeTheFirstRun() {
        RecordingCuda cuda = new RecordingCuda();
        try (GpuExecutable exe = executable(cuda, "smooth", TensorSpec.of(DType.F32, 100))) {
            List<String> built = cuda.lines();
            assertThat(built).filteredOn(l -> l.startsWith("h2d 4 ")).hasSize(2).allMatch(l -> l.endsWith(STREAM));
            assertThat(built.getLast()).isEqualTo("sync 7001");
            exe.run(List.of(Tensor.zeros(DType.F32, 100)));
            assertThat(cuda.lines()).filteredOn(l -> l.matches("(h2d|d2h|d2d|memset|launch).*"))
                    .allMatch(l -> l.endsWith(STREAM));
        }
    }

    @Test
    void closeReleasesTheStreamTheModulesAndEveryBuffer() {
        RecordingCuda cuda = new RecordingCuda();
        GpuExecutable exe = executable(cuda, "logistic", TensorSpec.of(DType.F32, 8, 4),
                TensorSpec.of(DType.F32, 4, 3));
        for (int run = 0; run < 2; run++) {
            exe.run(List.of(Tensor.zeros(DType.F32, 8, 4), Tensor.zeros(DType.F32, 4, 3)));
        }
        assertThat(cuda.live()).isGreaterThan(2);
        exe.close();
        assertThat(cuda.live()).isZero();
        assertThat(cuda.lines()).containsSubsequence("sync 7001", "module unload", "stream destroy 7001");
        exe.close();
        assertThatThrownBy(() -> exe.run(List.of(Tensor.zeros(DType.F32, 8, 4), Tensor.zeros(DType.F32, 4, 3))))
                .isInstanceOf(WeftException.class)
                .hasMessageEndingWith("this GPU executable was closed");
    }

    /** What happens when the compile cache drops an executable: the cleaner releases it. */
    @Test
    void anUnreachableExecutableIsReleased() throws InterruptedException {
        RecordingCuda cuda = new RecordingCuda();
        runAndDrop(cuda);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (cuda.live() > 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(cuda.live()).isZero();
        assertThat(cuda.lines()).contains("stream destroy 7001");
    }

    private static void runAndDrop(RecordingCuda cuda) {
        executable(cuda, "smooth", TensorSpec.of(DType.F32, 10)).run(List.of(Tensor.zeros(DType.F32, 10)));
    }
}
