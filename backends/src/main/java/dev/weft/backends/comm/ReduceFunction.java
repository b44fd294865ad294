package dev.weft.backends.comm;

import dev.weft.DType;

import java.lang.foreign.MemorySegment;

/**
 * Combines two vectors of {@code count} elements of {@code dtype} element-wise, in place, with the argument
 * order of {@code MPI_User_function}: {@code inout[i] = in[i] ⊕ inout[i]}, where {@code in} is the left operand
 * (the contribution of the lower ranks) and {@code inout} the right one. The function must be associative; it
 * need not be commutative, as runtimes combine contributions in ascending rank order.
 *
 * <p>Buffers are read and written with {@code dtype.layout()}, which is unaligned; they may be heap or native
 * segments, and the function may be called on any thread.
 */
@FunctionalInterface
public interface ReduceFunction {
    void combine(MemorySegment inout, MemorySegment in, long count, DType dtype);
}
