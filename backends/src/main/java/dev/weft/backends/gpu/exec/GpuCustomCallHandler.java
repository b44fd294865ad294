package dev.weft.backends.gpu.exec;

import dev.weft.lowering.ir.Op;

/**
 * Runs the {@code stablehlo.custom_call}s of one {@code call_target_name} on the GPU executor (such as
 * {@code weft.nccl.allreduce}). {@code operands} has one entry per op operand and {@code results} one per op
 * result: a device buffer of the value's byte size, or {@code null} for a {@code !stablehlo.token}. Result buffers
 * come from the executor's pool and are to be filled; instead, a handler may put another buffer from the pool
 * ({@link GpuResources#take}, at least as large) in an entry of {@code results}, giving the one it replaces back
 * ({@link GpuResources#give}). The handler enqueues its work on {@code stream} and returns without waiting for it
 * (no host synchronisation): everything the executor enqueues later on that stream runs after it. Operand buffers
 * must not be written and must not be used after the work enqueued here completes.
 */
@FunctionalInterface
public interface GpuCustomCallHandler {
    void call(Op op, DeviceBuffer[] operands, DeviceBuffer[] results, GpuStream stream);
}
