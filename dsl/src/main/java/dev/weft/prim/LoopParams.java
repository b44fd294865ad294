package dev.weft.prim;

import dev.weft.graph.Region;
import dev.weft.graph.RegionParams;
import java.util.List;

/**
 * A {@code fori}: the body runs for {@code i} in {@code [lo, hi)}. {@code body} is closed, with parameters
 * {@code [i (i32 scalar), carries..., captures...]}, returning the new carries.
 */
public record LoopParams(int lo, int hi, Region body) implements RegionParams {
    @Override
    public List<Region> regions() {
        return List.of(body);
    }

    @Override
    public LoopParams withRegions(List<Region> regions) {
        return new LoopParams(lo, hi, regions.getFirst());
    }

    /** The trip range; the body prints as the node's nested region. */
    @Override
    public String toString() {
        return "lo=" + lo + " hi=" + hi;
    }
}
