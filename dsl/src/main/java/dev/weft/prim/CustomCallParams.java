package dev.weft.prim;

import dev.weft.graph.Region;
import dev.weft.graph.RegionParams;
import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * A function with user-given differentiation rules ({@link Prims#CUSTOM_JVP_CALL}, {@link Prims#CUSTOM_VJP_CALL}):
 * {@code body} is the function, closed, with parameters {@code [arguments..., captures...]} (the node's inputs);
 * the first {@code arguments} are those the rules see. Anything but a transform runs the body (eagerly, inlined
 * when lowered).
 */
public sealed interface CustomCallParams extends RegionParams permits CustomJvpParams, CustomVjpParams {
    /** The function, traced. */
    Region body();

    /** How many of the inputs are the function's arguments (the rest are its captures). */
    int arguments();

    /** Where the custom function was defined ({@code Weft.customJvp} or {@code Weft.customVjp}). */
    SourceLocation defined();

    @Override
    default List<Region> regions() {
        return List.of(body());
    }
}
