package dev.weft.shard;

import dev.weft.graph.Node;
import java.util.List;

/**
 * Backward sharding propagation for one primitive: how its inputs are best laid out when its output is wanted in a
 * layout (by a {@code Sharding.constrain} or a later use), so that an operand that is replicated can be sliced to
 * its block before the work rather than after it.
 */
@FunctionalInterface
interface ShardingWant {
    /** The layout wanted of each input of {@code node} ({@code null}: no preference) when its output is {@code out}. */
    List<Sharding> inputs(Node node, Sharding out);
}
