package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.graph.Node;
import java.util.List;

/** How one primitive runs on sharded operands: the local operations and communication that replace a node. */
@FunctionalInterface
interface ShardingRule {
    /**
     * The local blocks of {@code node}'s outputs, from those of its inputs ({@code in}); it reshards inputs and
     * declares the outputs' shardings through {@code p}.
     */
    List<Tensor> apply(Node node, List<Tensor> in, Partition p);
}
