package dev.weft.graph;

import dev.weft.spi.Params;
import java.util.List;

/** Parameters that hold closed regions: those of a control-flow primitive. */
public interface RegionParams extends Params {
    /** The regions, in the primitive's order. */
    List<Region> regions();

    /** These parameters with {@code regions} (same count and order) in place of the current ones. */
    RegionParams withRegions(List<Region> regions);
}
