package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.lowering.ir.Func;

/**
 * The local half of a custom reduce op, implemented by the GPU executor as a kernel: NCCL reduces only with its
 * built-in operators, so a custom op first gathers every rank's contribution and then combines them on each GPU.
 *
 * <p>{@link #apply} queues on {@code stream} the computation of
 * {@code out[i] = f(... f(f(g[0][i], g[1][i]), g[2][i]) ..., g[ranks-1][i])} for {@code i < count}, where
 * {@code g[r]} is the block of {@code count} elements of {@code dtype} at {@code gathered + r * count * size}, and
 * {@code f} is {@code function}: the module's private reduction function, taking two 1-D tensors of the element
 * count it was traced for and returning their elementwise combination (its left operand is the lower rank's, as
 * in the CPU runtime's {@code RuntimeReduceOp}). The function is elementwise, so a kernel may apply it to any number of
 * elements at a time. Contributions are combined in rank order, so results match the CPU runtime's.
 */
@FunctionalInterface
public interface LocalReduce {
    void apply(long stream, Func function, DType dtype, long count, int ranks, long gathered, long out);
}
