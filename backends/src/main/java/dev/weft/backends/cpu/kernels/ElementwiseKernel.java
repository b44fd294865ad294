package dev.weft.backends.cpu.kernels;

import java.lang.foreign.MemorySegment;

/**
 * An elementwise op bound to its dtypes: computes the first {@code n} elements of {@code out} from up to three
 * operands ({@code null} past the op's arity). Made by {@link Elementwise#kernel}; run eagerly, for single ops and
 * for the ops inside a fusion.
 */
@FunctionalInterface
public interface ElementwiseKernel {
    void apply(MemorySegment a, MemorySegment b, MemorySegment c, MemorySegment out, long n);
}
