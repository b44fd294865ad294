package dev.weft.backends.gpu.exec;

import java.util.List;

/**
 * The steps of one block. The caller defines {@code arguments} before running it; the block releases every value
 * it defines (arguments included) after its last use, except its {@code results}, which the caller takes over and
 * releases.
 */
public record BlockPlan(int[] arguments, List<GpuStep> steps, int[] results) {
}
