package dev.weft.prim;

import dev.weft.CustomJvpRule;
import dev.weft.graph.Region;
import dev.weft.spi.SourceLocation;
import java.util.List;

/** A {@code Weft.customJvp} function's body and forward-mode rule (compared by identity). */
public record CustomJvpParams(Region body, int arguments, CustomJvpRule rule, SourceLocation defined)
        implements CustomCallParams {
    @Override
    public CustomJvpParams withRegions(List<Region> regions) {
        return new CustomJvpParams(regions.getFirst(), arguments, rule, defined);
    }

    /** The body prints as the node's nested region. */
    @Override
    public String toString() {
        return "arguments=" + arguments + " defined=" + defined;
    }
}
