package dev.weft.prim;

import dev.weft.graph.Region;
import dev.weft.graph.RegionParams;
import java.util.List;

/**
 * A {@code whileLoop}: while {@code cond} holds, the carries become {@code body}'s results. Both regions are closed,
 * with parameters {@code [carries..., captures...]} (one capture list for both); {@code cond} returns a BOOL scalar,
 * {@code body} the new carries.
 */
public record WhileParams(Region cond, Region body) implements RegionParams {
    @Override
    public List<Region> regions() {
        return List.of(cond, body);
    }

    @Override
    public WhileParams withRegions(List<Region> regions) {
        return new WhileParams(regions.get(0), regions.get(1));
    }

    /** The regions print as the node's nested regions. */
    @Override
    public String toString() {
        return "";
    }
}
