package dev.weft.tracer;

import dev.weft.Trees;
import java.util.List;

/**
 * The key of a tree argument of a {@code @Compile} method: its structure (constants included) and each leaf's key
 * (its aval, or its global aval and sharding).
 */
record TreeArgument(Trees.Structure structure, List<Object> leaves) {
}
