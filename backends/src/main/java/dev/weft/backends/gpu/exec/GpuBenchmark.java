package dev.weft.backends.gpu.exec;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.function.Consumer;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.JCudaDriver;

/**
 * {@code scripts/gpu-check.sh}'s device benchmark. Without arguments: the PTX target, the host synchronisations
 * per step of a {@code Weft.fori} run by {@link GpuExecutable} (0 expected), a fused elementwise kernel's bandwidth
 * against {@code cuMemcpyDtoD} of the same bytes, and the fallback GEMM kernel against the loaded
 * {@link GpuMatmul} (cuBLAS) when there is one; times are from CUDA events on the executor's kind of stream, best
 * of several runs. With {@code allreduce}, on every rank of {@code Comm.world()} (one GPU each, under
 * {@code mpirun} or fake ranks) with {@code -Dweft.target=gpu}: the NCCL allreduce of 64 MiB in a compiled
 * {@code Weft.fori}, as algorithm and bus bandwidth (nccl-tests' definition: {@code 2 (n - 1) / n} times the
 * algorithm bandwidth), printed by rank 0.
 */
public final class GpuBenchmark {
    /** {@code GpuTarget.NAME}, spelled out: the target sits above this package (GpuPlannerTest checks they agree). */
    static final String TARGET = "gpu";
    private static final int ALLREDUCE_STEPS = 20;

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

    /** The allreduce timed: {@code steps} allreduces, each of the previous average. */
    @dev.weft.Compile
    public static dev.weft.Tensor allreduces(Comm comm, dev.weft.Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> comm.allreduce(c, ReduceOp.SUM).mul(1.0 / comm.size()));
    }

    public static void main(String[] args) {
        Weft.install();
        if (args.length > 0 && args[0].equals("allreduce")) {
            allreduce();
        } else {
            kernels();
        }
    }

    /**
     * Per allreduce step: the difference between a call of {@value #ALLREDUCE_STEPS} + 2 steps and one of 2 steps
     * (best of three each), so that the copies of the argument and the result cancel out.
     */
    private static void allreduce() {
        Comm comm = Comm.world();
        dev.weft.Tensor x = dev.weft.Tensor.ones(DType.F32, 16L << 20);
        double seconds = (bestCall(comm, x, ALLREDUCE_STEPS + 2) - bestCall(comm, x, 2)) / ALLREDUCE_STEPS;
        if (comm.rank() == 0) {
            double algbw = 4.0 * x.size() / seconds / 1e9, n = comm.size();
            System.out.printf("NCCL allreduce f32 64 MiB on %d ranks: %.3f ms per step, algbw %.1f GB/s, busbw %.1f"
                    + " GB/s (each step also runs a scaling kernel)%n",
                    comm.size(), seconds * 1e3, algbw, algbw * 2 * (n - 1) / n);
        }
    }

    /** The best of three calls of {@link #allreduces} after a warm-up, in seconds; checks the result. */
    private static double bestCall(Comm comm, dev.weft.Tensor x, int steps) {
        allreduces(comm, x, steps).toFloatArray();
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            float[] out = allreduces(comm, x, steps).toFloatArray();
            best = Math.min(best, (System.nanoTime() - start) / 1e9);
            if (out[0] != 1f) {
                throw new IllegalStateException("the allreduce average of ones is " + out[0]);
            }
        }
        return best;
    }

    private static void kernels() {
        CudaDevice device = CudaDevice.open(0);
        System.out.println("PTX target: " + device.target().arch() + ", ISA " + device.target().isaVersion());
        foriSynchronisations(200);
        GpuStream stream = device.newStream();
        long n = 1L << 26;
        GpuPlan fused = GpuPlanner.plan((Module) Weft.lower(TARGET, GpuBenchmark.class, "axpby",
                TensorSpec.of(DType.F32, n), TensorSpec.of(DType.F32, n)), device.target());
        DeviceBuffer x = device.allocate(4 * n), y = device.allocate(4 * n), z = device.allocate(4 * n);
        DeviceBuffer two = device.allocate(4), three = device.allocate(4), one = device.allocate(4);
        HostCopies copies = new HostCopies(device, stream);
        try (Arena arena = Arena.ofConfined()) {
            copies.uploadValue(arena.allocateFrom(ValueLayout.JAVA_FLOAT, 2), two.address());
            copies.uploadValue(arena.allocateFrom(ValueLayout.JAVA_FLOAT, 3), three.address());
            copies.uploadValue(arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1), one.address());
        }
        copies.synchronize();
        Kernel k = fused.kernels().getFirst();
        CUfunction fn = load(device, fused, k);
        GpuStep.Launch launch = fused.main().steps().stream().filter(GpuStep.Launch.class::isInstance)
                .map(GpuStep.Launch.class::cast).findFirst().orElseThrow();
        Pointer fusedParams = params(fused, launch, x, y, z, two, three, one);
        double kernelMs = time(stream, s -> device.launch(fn, k, fusedParams, s));
        double copyMs = time(stream, s -> device.copyOnDevice(z.address(), x.address(), 4 * n, s));
        double kernelGbs = 12.0 * n / kernelMs / 1e6, copyGbs = 8.0 * n / copyMs / 1e6;
        System.out.printf("fused elementwise f32[%d]: %.1f GB/s; cuMemcpyDtoD of the same bytes: %.1f GB/s"
                + " (ratio %.2f)%n", n, kernelGbs, copyGbs, kernelGbs / copyGbs);
        int dim = 4096;
        GpuPlan mm = GpuPlanner.plan((Module) Weft.lower(TARGET, GpuBenchmark.class, "matmul",
                TensorSpec.of(DType.F32, dim, dim), TensorSpec.of(DType.F32, dim, dim)),
                device.target());
        Kernel gemm = mm.kernels().getFirst();
        CUfunction gemmFn = load(device, mm, gemm);
        DeviceBuffer a = device.allocate(4L * dim * dim), b = device.allocate(4L * dim * dim),
                c = device.allocate(4L * dim * dim);
        Pointer gemmParams = Pointer.to(Pointer.to(a.pointer()), Pointer.to(b.pointer()), Pointer.to(c.pointer()));
        double ptxMs = time(stream, s -> device.launch(gemmFn, gemm, gemmParams, s));
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
        try (GpuExecutable exe = new GpuExecutable((Module) Weft.lower(TARGET, GpuBenchmark.class, "relax",
                TensorSpec.of(DType.F32, 1024), steps), CommBindings.NONE)) {
            long before = exe.hostSynchronisations();
            float last = exe.run(List.of(Tensor.zeros(DType.F32, 1024))).getFirst().toFloatArray()[1023];
            long inLoop = exe.hostSynchronisations() - before - 1;
            System.out.printf("host synchronisations per fori step: %.2f (%d in a %d-step fori; result %.4f,"
                    + " expected 2)%n", (double) inLoop / steps, inLoop, steps, last);
        }
    }

    /** Loads the plan's module through {@link PtxModules} (the JIT's log on failure); returns {@code k}. */
    private static CUfunction load(CudaDevice device, GpuPlan plan, Kernel k) {
        return device.function(device.loadModule(plan.ptx()), k.name());
    }

    /** Kernel parameters for {@code launch}: the arguments x, y, then constants 2, 3, 1 by value, then z. */
    private static Pointer params(GpuPlan plan, GpuStep.Launch launch, DeviceBuffer x, DeviceBuffer y, DeviceBuffer z,
                                  DeviceBuffer two, DeviceBuffer three, DeviceBuffer one) {
        java.util.Map<Integer, DeviceBuffer> bySlot = new java.util.HashMap<>();
        bySlot.put(plan.main().arguments()[0], x);
        bySlot.put(plan.main().arguments()[1], y);
        int c = 0;
        for (GpuStep s : plan.main().steps()) {
            if (s instanceof GpuStep.Constant k) {
                float v = k.data().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0);
                bySlot.put(k.slot(), v == 2 ? two : v == 3 ? three : one);
                c++;
            } else if (s instanceof GpuStep.Allocate a) {
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
