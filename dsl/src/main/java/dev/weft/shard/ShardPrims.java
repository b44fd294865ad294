package dev.weft.shard;

import dev.weft.spi.Effect;
import dev.weft.spi.Primitive;
import java.util.List;

/** The primitive of {@link Sharding#constrain} in a traced program; the partitioner replaces it by a reshard. */
final class ShardPrims {
    private ShardPrims() {
    }

    /** The identity on values, marking the layout its result must have. Never lowered: partitioning removes it. */
    static final Primitive<ConstrainParams> CONSTRAIN = new Primitive<>("sharding_constraint", ConstrainParams.class,
            Effect.PURE, (in, p) -> List.of(in.getFirst()));
}
