package dev.weft.tracer;

import dev.weft.shard.Sharding;
import dev.weft.spi.Aval;

/** The compile-cache key of a sharded tensor argument: its global aval and its sharding. */
record ShardedArgument(Aval global, Sharding sharding) {
}
