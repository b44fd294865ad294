package dev.weft.backends.gpu.exec.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.gpu.NativeStub;
import dev.weft.backends.gpu.blas.CublasLibrary;
import dev.weft.backends.gpu.blas.CublasMatmul;
import dev.weft.backends.gpu.exec.DeviceBuffer;
import dev.weft.backends.gpu.exec.GpuCustomCallHandler;
import dev.weft.backends.gpu.exec.GpuExtension;
import dev.weft.backends.gpu.nccl.NcclLibrary;
import dev.weft.comm.Comm;
import dev.weft.it.gpu.NcclPrograms;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.spi.CommBindings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The NCCL and cuBLAS extensions without a GPU: found by {@link ServiceLoader}, failing clearly without NCCL, and
 * against the stub libraries handling every {@code weft.nccl.*} call of a lowered module.
 */
class GpuExtensionsTest {
    private static final String MISSING = "/nonexistent/libnccl.so.2";

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static <T> T withNccl(String library, Supplier<T> body) {
        return withProperty(NcclLibrary.LIBRARY_PROPERTY, library, body);
    }

    private static <T> T withProperty(String key, String value, Supplier<T> body) {
        String previous = System.setProperty(key, value);
        try {
            return body.get();
        } finally {
            if (previous == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, previous);
            }
        }
    }

    /** This thread's world, bound to its reference. */
    private static CommBindings world() {
        return CommBindings.of(List.of(Comm.world().handle()));
    }

    private static Module lower(String method, Object... args) {
        return (Module) Weft.lower("gpu", NcclPrograms.class, method, args);
    }

    @Test
    void serviceLoaderFindsBothExtensions() {
        List<Class<?>> found = new ArrayList<>();
        ServiceLoader.load(GpuExtension.class).forEach(e -> found.add(e.getClass()));
        assertThat(found).containsExactlyInAnyOrder(NcclGpuExtension.class, CublasGpuExtension.class);
    }

    @Test
    void withoutNcclAModuleWithAnNcclCallFailsAtThatCallsLine() {
        Module m = lower("allreduce", TensorSpec.of(DType.F32, 4), Comm.world(), NcclPrograms.XPLUS);
        assertThatThrownBy(() -> withNccl(MISSING, () -> new NcclGpuExtension().customCalls(m, world(), new FakeResources())))
                .isInstanceOf(CommException.class)
                .hasMessageStartingWith("NcclPrograms.java:" + NcclPrograms.allreduceLine
                        + ": weft.nccl.allreduce needs NCCL: NCCL could not be loaded from " + MISSING + ": ")
                .hasMessageContaining("WEFT_NCCL_LIB");
    }

    @Test
    void aModuleWithoutNcclCallsNeedsNoNccl() {
        Module m = lower("twice", TensorSpec.of(DType.F32, 4));
        assertThat(withNccl(MISSING, () -> new NcclGpuExtension().customCalls(m, world(), new FakeResources()))).isEmpty();
    }

    @Test
    void everyNcclTargetOfALoweredModuleHasAHandler() {
        NativeStub stub = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        Module m = lower("everyOp", TensorSpec.of(DType.F32, 4), Comm.world());
        Set<String> used = IrWalk.ops(m.main().body())
                .flatMap(op -> op.attr("call_target_name") instanceof Attr.Str(String name) ? Stream.of(name) : Stream.of())
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(used).hasSize(14);
        Map<String, GpuCustomCallHandler> handlers = withNccl(stub.file.toString(),
                () -> new NcclGpuExtension().customCalls(m, world(), new FakeResources()));
        assertThat(handlers.keySet()).containsAll(used);
    }

    /**
     * A custom allreduce on one rank: NCCL gathers into a buffer from the executable's pool, the combining kernel
     * folds it into the result, and the buffer goes back to the pool, all on the executable's stream.
     */
    @Test
    void aCustomAllreduceGathersThenLaunchesTheCombiningKernel() {
        NativeStub stub = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        Module m = lower("allreduce", TensorSpec.of(DType.F32, 4), Comm.world(), NcclPrograms.XPLUS);
        FakeResources res = new FakeResources();
        Map<String, GpuCustomCallHandler> handlers = withNccl(stub.file.toString(),
                () -> new NcclGpuExtension().customCalls(m, world(), res));
        Op allreduce = m.main().body().ops().stream()
                .filter(op -> op.attr("call_target_name") != null).findFirst().orElseThrow();
        stub.reset();
        DeviceBuffer out = new DeviceBuffer(null, 2000, 16);
        DeviceBuffer[] results = {out, null};
        handlers.get("weft.nccl.allreduce").call(allreduce, new DeviceBuffer[] {new DeviceBuffer(null, 1000, 16),
            null}, results, res.stream());
        assertThat(stub.calls()).containsExactly(
                "ncclAllGather send=1000 recv=900000 count=4 datatype=7 comm=0 stream=4242",
                "ncclCommGetAsyncError comm=0");
        assertThat(res.lines).containsExactly("take 16 -> 900000",
                "launch weft_combine_1_4_weft_reduce_xplus_f32_4 [900000, 2000]", "give 900000");
        assertThat(results[0]).isSameAs(out);
    }

    @Test
    void aCustomReduceOpThatIsNotElementwiseFailsAtItsLine() {
        NativeStub stub = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        Module m = lower("badReduce", TensorSpec.of(DType.F32, 4), Comm.world());
        assertThatThrownBy(() -> withNccl(stub.file.toString(),
                () -> new NcclGpuExtension().customCalls(m, world(), new FakeResources())))
                .isInstanceOf(CommException.class)
                .hasMessage("NcclPrograms.java:" + NcclPrograms.badReduceLine + ": weft.nccl.allreduce: custom reduce"
                        + " op cannot run on the GPU: non-elementwise op stablehlo.reduce in an elementwise body");
    }

    @Test
    void withoutCublasThereIsNoMatmul() {
        boolean loads;
        try {
            CublasLibrary.load();
            loads = true;
        } catch (IllegalStateException e) {
            loads = false;
        }
        assumeTrue(!loads, "a cuBLAS library is installed here");
        assertThat(new CublasGpuExtension().matmul(new FakeResources().stream())).isEmpty();
    }

    @Test
    void cublasMatmulsAreF32AndF64OnTheCallersStream() {
        NativeStub stub = NativeStub.build("cublas_stub.c", "libcublas.so.12");
        stub.reset();
        CublasLibrary cublas = withProperty(CublasLibrary.LIBRARY_PROPERTY, stub.file.toString(),
                CublasLibrary::load);
        CublasGpuMatmul mm = new CublasGpuMatmul(new CublasMatmul(cublas), cublas);
        assertThat(mm.supports(DType.F32)).isTrue();
        assertThat(mm.supports(DType.F64)).isTrue();
        assertThat(mm.supports(DType.I32)).isFalse();
        assertThat(mm).hasToString("cuBLAS (" + stub.file + ")");
        mm.gemm(new FakeResources().stream(), DType.F64, 2, 5, 3, 1000, 2000, 3000, 1);
        assertThat(stub.calls()).containsExactly("cublasCreate_v2", "cublasSetStream_v2 ok=1 stream=4242",
                "cublasDgemm_v2 ok=1 transa=0 transb=0 m=5 n=2 k=3 alpha=1 A=2000 lda=5 B=1000 ldb=3 beta=0"
                        + " C=3000 ldc=5");
    }
}
