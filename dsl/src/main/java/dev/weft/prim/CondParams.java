package dev.weft.prim;

import dev.weft.graph.Region;
import dev.weft.graph.RegionParams;
import java.util.List;

/** A {@code cond}'s two closed branches, both with parameters {@code [captures...]} and results of equal avals. */
public record CondParams(Region onTrue, Region onFalse) implements RegionParams {
    @Override
    public List<Region> regions() {
        return List.of(onTrue, onFalse);
    }

    @Override
    public CondParams withRegions(List<Region> regions) {
        return new CondParams(regions.get(0), regions.get(1));
    }

    /** Nothing: the branches print as the node's nested regions. */
    @Override
    public String toString() {
        return "";
    }
}
