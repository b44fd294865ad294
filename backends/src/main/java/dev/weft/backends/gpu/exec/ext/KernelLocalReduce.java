package dev.weft.backends.gpu.exec.ext;

import dev.weft.DType;
import dev.weft.backends.gpu.exec.GpuResources;
import dev.weft.backends.gpu.nccl.LocalReduce;
import dev.weft.backends.gpu.ptx.CombineKernels;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.lowering.ir.Func;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link LocalReduce} as a generated kernel ({@link CombineKernels#inRankOrder}) on one executable's stream: one
 * launch per call, each thread folding every rank's element in rank order. A kernel per function, element count
 * and rank count is generated and loaded on its first use.
 */
final class KernelLocalReduce implements LocalReduce {
    private record Key(Func function, long count, int ranks) {
    }

    private final GpuResources resources;
    private final Map<Key, Kernel> kernels = new HashMap<>();

    KernelLocalReduce(GpuResources resources) {
        this.resources = resources;
    }

    /**
     * Fails with the generator's reason unless {@code function} can run as a combining kernel: checked when an
     * executable is built, so that a bad function fails before any communication.
     */
    static void check(Func function) {
        CombineKernels.inRankOrder(function, 1, 2, "check");
    }

    @Override
    public void apply(long stream, Func function, DType dtype, long count, int ranks, long gathered, long out) {
        if (stream != resources.stream().handle()) {
            throw new IllegalArgumentException("stream 0x" + Long.toHexString(stream)
                    + " is not the executable's stream");
        }
        if (dtype != CombineKernels.dtype(function)) {
            throw new IllegalArgumentException("reduce function " + function.name() + " combines "
                    + CombineKernels.dtype(function).specName() + ", not " + dtype.specName());
        }
        if (count == 0) {
            return;
        }
        Kernel k = kernels.computeIfAbsent(new Key(function, count, ranks), key -> CombineKernels.inRankOrder(
                function, count, ranks, "weft_combine_" + ranks + "_" + count + "_" + function.name()));
        resources.launch(k, gathered, out);
    }
}
