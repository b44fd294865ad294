package dev.weft.backends.gpu.exec;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.lowering.ir.Module;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.function.Consumer;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * {@code scripts/gpu-check.sh}'s device benchmark: the PTX target, the host synchronisations per step of a
 * {@code Weft.fori} run by {@link GpuExecutable} (0 expected), a fused elementwise kernel's bandwidth against
 * {@code cuMemcpyDtoD} of the same bytes, and the fallback GEMM kernel against the loaded {@link GpuMatmul} (cuBLAS)
 * when there is one. Times are from CUDA events on the executor's kind of stream, best of several runs.
 */
public final class GpuBenchmark {
    private GpuBenchmark() {
    }

    /** The fused program timed: two reads, one write per element. */
    @dev.weft.Compile
    public static Tensor axpby(Tensor x, Tensor y) {
        return x.mul(2).add(y.mul(3)).add(1);
    }

    /** The counted loop whose host synchronisations are counted. */
    @dev.weft.Compile
    public static Tensor relax(Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> c.mul(0.5).add(1));
    }

    /** The matmul timed. */
    @dev.weft.Compile
    public static Tensor matmul(Tensor a, Tensor b) {
        return a.matmul(b);
    }

    public static void main(String[] args) {
        Weft.install();
        CudaDevice device = CudaDevice.open(0);
        System.out.println("PTX target: " + device.target().arch() + ", ISA " + device.target().isaVersion());
        foriSynchronisations(200);
        GpuStream stream = device.newStream();
        long n = 1L << 26;
        GpuPlan fused = GpuPlanner.plan((Module) Weft.lower("gpu", GpuBenchmark.class, "axpby",
                TensorSpec.of(DType.F32, n), TensorSpec.of(DType.F32, n)), device.target());
        DeviceBuffer x = CudaDevice.allocate(4 * n), y = CudaDevice.allocate(4 * n), z = CudaDevice.allocate(4 * n);
        DeviceBuffer two = CudaDevice.allocate(4), three = CudaDevice.allocate(4), one = CudaDevice.allocate(4);
        JCudaDriver.cuMemsetD32(two.pointer(), Float.floatToRawIntBits(2), 1);
        JCudaDriver.cuMemsetD32(three.pointer(), Float.floatToRawIntBits(3), 1);
        JCudaDriver.cuMemsetD32(one.pointer(), Float.floatToRawIntBits(1), 1);
        Kernel k = fused.kernels().getFirst();
        CUfunction fn = load(fused, k);
        Step.Launch launch = fused.main().steps().stream().filter(Step.Launch.class::isInstance)
                .map(Step.Launch.class::cast).findFirst().orElseThrow();
        double kernelMs = time(stream, s -> JCudaDriver.cuLaunchKernel(fn, k.launch().gridX(), 1, 1,
                k.launch().blockX(), 1, 1, 0, s.stream(), params(fused, launch, x, y, z, two, three, one), null));
        double copyMs = time(stream, s -> JCudaDriver.cuMemcpyDtoDAsync(z.pointer(), x.pointer(), 4 * n,
                s.stream()));
        double kernelGbs = 12.0 * n / kernelMs / 1e6, copyGbs = 8.0 * n / copyMs / 1e6;
        System.out.printf("fused elementwise f32[%d]: %.1f GB/s; cuMemcpyDtoD of the same bytes: %.1f GB/s"
                + " (ratio %.2f)%n", n, kernelGbs, copyGbs, kernelGbs / copyGbs);
        int dim = 4096;
        GpuPlan mm = GpuPlanner.plan((Module) Weft.lower("gpu", GpuBenchmark.class, "matmul",
                TensorSpec.of(DType.F32, dim, dim), TensorSpec.of(DType.F32, dim, dim)),
                device.target());
        Kernel gemm = mm.kernels().getFirst();
        CUfunction gemmFn = load(mm, gemm);
        DeviceBuffer a = CudaDevice.allocate(4L * dim * dim), b = CudaDevice.allocate(4L * dim * dim),
                c = CudaDevice.allocate(4L * dim * dim);
        Pointer gemmParams = Pointer.to(Pointer.to(a.pointer()), Pointer.to(b.pointer()), Pointer.to(c.pointer()));
        double ptxMs = time(stream, s -> JCudaDriver.cuLaunchKernel(gemmFn, gemm.launch().gridX(),
                gemm.launch().gridY(), 1, gemm.launch().blockX(), gemm.launch().blockY(), 1, 0, s.stream(),
                gemmParams, null));
        double flops = 2.0 * dim * dim * dim;
        System.out.printf("GEMM f32 %dx%dx%d, PTX fallback kernel: %.1f TFLOP/s%n", dim, dim, dim,
                flops / ptxMs / 1e9);
        Optional<GpuMatmul> blas = Optional.empty();
        for (GpuExtension e : ServiceLoader.load(GpuExtension.class)) {
            blas = blas.or(() -> e.matmul(stream));
        }
        if (blas.isPresent() && blas.get().supports(DType.F32)) {
            GpuMatmul m = blas.get();
            double blasMs = time(stream, s -> m.gemm(s, DType.F32, dim, dim, dim, a.address(),
                    b.address(), c.address(), 1));
            System.out.printf("GEMM f32 %dx%dx%d, cuBLAS: %.1f TFLOP/s (PTX fallback at %.2fx)%n", dim, dim, dim,
                    flops / blasMs / 1e9, blasMs / ptxMs);
        } else {
            System.out.println("GEMM through cuBLAS: not available (no GpuExtension provides a GpuMatmul)");
        }
    }

    /**
     * Runs a {@code steps}-step {@code Weft.fori} through {@link GpuExecutable} and prints the host
     * synchronisations it made per step, besides the one wait for the run's results.
     */
    private static void foriSynchronisations(int steps) {
        GpuExecutable exe = new GpuExecutable((Module) Weft.lower("gpu", GpuBenchmark.class, "relax",
                TensorSpec.of(DType.F32, 1024), steps));
        long before = exe.hostSynchronisations();
        float last = exe.run(List.of(Tensor.zeros(DType.F32, 1024))).getFirst().toFloatArray()[1023];
        long inLoop = exe.hostSynchronisations() - before - 1;
        System.out.printf("host synchronisations per fori step: %.2f (%d in a %d-step fori; result %.4f, expected"
                + " 2)%n", (double) inLoop / steps, inLoop, steps, last);
    }

    private static CUfunction load(GpuPlan plan, Kernel k) {
        CUmodule module = PtxModules.load(plan.ptx());
        CUfunction fn = new CUfunction();
        JCudaDriver.cuModuleGetFunction(fn, module, k.name());
        return fn;
    }

    /** Kernel parameters for {@code launch}: the arguments x, y, then constants 2, 3, 1 by value, then z. */
    private static Pointer params(GpuPlan plan, Step.Launch launch, DeviceBuffer x, DeviceBuffer y, DeviceBuffer z,
                                  DeviceBuffer two, DeviceBuffer three, DeviceBuffer one) {
        java.util.Map<Integer, DeviceBuffer> bySlot = new java.util.HashMap<>();
        bySlot.put(plan.main().arguments()[0], x);
        bySlot.put(plan.main().arguments()[1], y);
        int c = 0;
        for (Step s : plan.main().steps()) {
            if (s instanceof Step.Constant k) {
                float v = k.data().get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 0);
                bySlot.put(k.slot(), v == 2 ? two : v == 3 ? three : one);
                c++;
            } else if (s instanceof Step.Allocate a) {
                bySlot.put(a.slot(), z);
            }
        }
        if (c != 3) {
            throw new IllegalStateException("expected three scalar constants, found " + c);
        }
        Pointer[] p = new Pointer[launch.params().length];
        for (int i = 0; i < p.length; i++) {
            p[i] = Pointer.to(bySlot.get(launch.params()[i]).pointer());
        }
        return Pointer.to(p);
    }

    /** Best of 10 timed runs after a warm-up, in milliseconds. */
    private static double time(GpuStream stream, Consumer<GpuStream> work) {
        CUevent start = new CUevent(), stop = new CUevent();
        JCudaDriver.cuEventCreate(start, 0);
        JCudaDriver.cuEventCreate(stop, 0);
        work.accept(stream);
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            JCudaDriver.cuEventRecord(start, stream.stream());
            work.accept(stream);
            JCudaDriver.cuEventRecord(stop, stream.stream());
            JCudaDriver.cuEventSynchronize(stop);
            float[] ms = new float[1];
            JCudaDriver.cuEventElapsedTime(ms, start, stop);
            best = Math.min(best, ms[0]);
        }
        return best;
    }
}
