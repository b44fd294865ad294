package dev.weft.backends.cpu;

import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The eager implementation of one primitive: reads the input buffers and fills the output buffers, which the
 * interpreter has allocated for {@code outAvals}. Buffers are row-major; shapes were checked by the primitive's
 * shape rule. Kernel failures ({@link ArithmeticException}, {@link IllegalArgumentException}) are reported to the
 * user as {@link dev.weft.WeftException}s at the calling line.
 *
 * @param <P> the primitive's parameter type
 */
@FunctionalInterface
public interface EagerRule<P extends Params> {
    void apply(P params, List<Aval> inAvals, MemorySegment[] in, List<Aval> outAvals, MemorySegment[] out);
}
