package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Op;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Runs the {@code stablehlo.custom_call}s of one {@code call_target_name}.
 *
 * <p>{@code operands} has one entry per op operand: the row-major buffer of a tensor, or
 * {@link CustomCallRegistry#TOKEN} for a {@code !stablehlo.token}. Operand buffers must not be written; they stay
 * valid after the call (the executor never reuses a buffer once a custom call has seen it). The handler returns
 * one entry per op result: a buffer of at least the result's byte size that the handler will not write again
 * (token results may be {@link CustomCallRegistry#TOKEN}). Failures are thrown as exceptions; the executor adds
 * the op's source location to any that is not already a {@link dev.weft.WeftException}.
 */
@FunctionalInterface
public interface CustomCallHandler {
    List<MemorySegment> call(Op op, List<MemorySegment> operands);
}
