package dev.weft.backends.gpu.exec;

import dev.weft.backends.gpu.ptx.Kernel;
import java.util.List;

/** A module prepared for the GPU: the plan of {@code @main}, its frame size, and the PTX module of every kernel. */
public record GpuPlan(BlockPlan main, int slots, List<Kernel> kernels, String ptx) {
}
