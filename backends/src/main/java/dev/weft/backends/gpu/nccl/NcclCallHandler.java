package dev.weft.backends.gpu.nccl;

import dev.weft.lowering.ir.Op;
import java.util.List;

/**
 * Runs the {@code stablehlo.custom_call}s of one {@code call_target_name} on the GPU executor.
 *
 * <p>{@code operands} has one entry per op operand: the device pointer of a tensor's row-major buffer, or
 * {@link #TOKEN} for a {@code !stablehlo.token}. Operand buffers must not be written. {@code results} has one
 * entry per op result: for a tensor, a device buffer of the result's byte size from the executor that the
 * handler may fill; {@link #TOKEN} for a token. The handler queues its work on {@code stream} (the CUDA stream,
 * {@code cudaStream_t}, as a pointer) and returns without waiting for it, one entry per result: the buffer it was
 * given, or another device buffer whose ownership passes to the executor (the one it was given then goes back to
 * the executor); {@link #TOKEN} for a token. Failures are thrown as exceptions.
 */
@FunctionalInterface
public interface NcclCallHandler {
    /** Stands for a token operand or result: tokens carry no data. */
    long TOKEN = 0L;

    List<Long> call(Op op, long[] operands, long[] results, long stream);
}
