package dev.weft.shard;

import dev.weft.spi.Params;

/** The sharding a {@link ShardPrims#CONSTRAIN} point asks for. */
record ConstrainParams(Sharding sharding) implements Params {
    @Override
    public String toString() {
        return sharding.toString();
    }
}
