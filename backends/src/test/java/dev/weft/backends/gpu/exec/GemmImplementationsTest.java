package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.backends.gpu.ptx.GemmKernel;
import dev.weft.backends.gpu.ptx.Kernel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.ServiceLoader;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** On a machine with a CUDA device: the cuBLAS matmul and the PTX GEMM kernel both compute the row-major product. */
@Tag("gpu")
@EnabledIf("deviceAvailable")
class GemmImplementationsTest {
    static boolean deviceAvailable() {
        return GpuExecutable.unavailableReason().isEmpty();
    }

    @Test
    void cublasAndThePtxKernelMatchAHostProduct() {
        CudaDevice device = CudaDevice.open(0);
        GpuStream stream = device.newStream();
        HostCopies copies = new HostCopies(device, stream);
        Optional<GpuMatmul> found = Optional.empty();
        for (GpuExtension e : ServiceLoader.load(GpuExtension.class)) {
            found = found.or(() -> e.matmul(stream));
        }
        assumeTrue(found.isPresent(), "no GpuExtension offers a matmul: cuBLAS is not loadable here");
        GpuMatmul cublas = found.get();
        Random random = new Random(7);
        for (DType t : List.of(DType.F32, DType.F64)) {
            for (int[] s : new int[][] {{37, 29, 20, 1}, {64, 48, 80, 3}}) {
                int m = s[0], n = s[1], k = s[2], batch = s[3];
                double[] a = values(t, random, batch * m * k), b = values(t, random, batch * k * n);
                double[] expected = product(a, b, m, n, k, batch);
                DeviceBuffer da = upload(device, copies, t, a), db = upload(device, copies, t, b);
                long cBytes = (long) batch * m * n * t.byteSize();
                DeviceBuffer viaPtx = device.allocate(cBytes), viaCublas = device.allocate(cBytes);
                Kernel gemm = GemmKernel.generate("gemm", t, m, n, k, batch);
                CUmodule module = PtxModules.load(device.target().module(List.of(gemm)));
                CUfunction fn = new CUfunction();
                JCudaDriver.cuModuleGetFunction(fn, module, gemm.name());
                var l = gemm.launch();
                JCudaDriver.cuLaunchKernel(fn, l.gridX(), l.gridY(), l.gridZ(), l.blockX(), l.blockY(), 1, 0,
                        stream.stream(), Pointer.to(Pointer.to(da.pointer()), Pointer.to(db.pointer()),
                                Pointer.to(viaPtx.pointer())), null);
                cublas.gemm(stream, t, m, n, k, da.address(), db.address(), viaCublas.address(), batch);
                double tolerance = t == DType.F32 ? 1e-5 * k : 1e-13 * k;
                String what = t.specName() + " " + m + "x" + n + "x" + k + " batch " + batch;
                assertClose(download(copies, t, viaPtx, expected.length), expected, tolerance, "PTX GEMM " + what);
                assertClose(download(copies, t, viaCublas, expected.length), expected, tolerance,
                        cublas + " " + what);
                for (DeviceBuffer d : List.of(da, db, viaPtx, viaCublas)) {
                    device.free(d);
                }
                JCudaDriver.cuModuleUnload(module);
            }
        }
    }

    /** Uniform in [-1, 1), exactly representable in {@code t}. */
    private static double[] values(DType t, Random random, int n) {
        double[] v = random.doubles(n, -1, 1).toArray();
        if (t == DType.F32) {
            for (int i = 0; i < n; i++) {
                v[i] = (float) v[i];
            }
        }
        return v;
    }

    private static double[] product(double[] a, double[] b, int m, int n, int k, int batch) {
        double[] c = new double[batch * m * n];
        for (int p = 0; p < batch; p++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int l = 0; l < k; l++) {
                        sum += a[p * m * k + i * k + l] * b[p * k * n + l * n + j];
                    }
                    c[p * m * n + i * n + j] = sum;
                }
            }
        }
        return c;
    }

    /** Uploads {@code values} as {@code t} on the stream of {@code copies}; they arrive before later work on it. */
    private static DeviceBuffer upload(CudaDevice device, HostCopies copies, DType t, double[] values) {
        DeviceBuffer d = device.allocate((long) values.length * t.byteSize());
        MemorySegment host = Arena.ofAuto().allocate(d.bytes());
        for (int i = 0; i < values.length; i++) {
            if (t == DType.F32) {
                host.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) values[i]);
            } else {
                host.setAtIndex(ValueLayout.JAVA_DOUBLE, i, values[i]);
            }
        }
        copies.upload(host, d.address());
        return d;
    }

    /** The first {@code n} elements of {@code d}, after everything queued before on the stream of {@code copies}. */
    private static double[] download(HostCopies copies, DType t, DeviceBuffer d, int n) {
        MemorySegment host = Arena.ofAuto().allocate((long) n * t.byteSize());
        copies.download(d.address(), host);
        copies.synchronize();
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = t == DType.F32 ? host.getAtIndex(ValueLayout.JAVA_FLOAT, i)
                    : host.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
        }
        return out;
    }

    private static void assertClose(double[] actual, double[] expected, double tolerance, String what) {
        for (int i = 0; i < expected.length; i++) {
            assertThat(actual[i]).as("%s element %d", what, i).isCloseTo(expected[i], Offset.offset(tolerance));
        }
    }
}
