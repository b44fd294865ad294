package dev.weft.prim;

import dev.weft.CustomVjpForward;
import dev.weft.Tensor;
import dev.weft.graph.Region;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/** A {@code Weft.customVjp} function's body and its forward and backward passes (compared by identity). */
public record CustomVjpParams(Region body, int arguments, Function<List<Tensor>, CustomVjpForward> fwd,
                              BiFunction<List<Tensor>, List<Tensor>, List<Tensor>> bwd, SourceLocation defined)
        implements CustomCallParams {
    @Override
    public CustomVjpParams withRegions(List<Region> regions) {
        return new CustomVjpParams(regions.getFirst(), arguments, fwd, bwd, defined);
    }

    /** The body prints as the node's nested region. */
    @Override
    public String toString() {
        return "arguments=" + arguments + " defined=" + defined;
    }
}
