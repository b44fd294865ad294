package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Traced;

/**
 * The payload of a sharded tensor: its global aval, this rank's block and its sharding. It has no interpreter that
 * could use it ({@link #owner()} is never active), so an eager operation on it is an error that names the line and
 * says what to do instead.
 */
record ShardedValue(Aval aval, Tensor local, Sharding sharding) implements Traced {
    /** Owns every sharded value and is never on an interpreter stack. */
    private static final Interpreter NOBODY = (prim, params, args, outAvals, where) -> {
        throw new IllegalStateException("sharded tensors are not interpreted");
    };

    @Override
    public Interpreter owner() {
        return NOBODY;
    }

    @Override
    public String describe() {
        return "a sharded tensor " + aval + " (" + sharding + ")";
    }

    @Override
    public String usedAfterEnd() {
        return "eagerly; operations on sharded tensors run inside @Compile methods (pass it to one), or use"
                + " Sharding.localBlock for this rank's block or Sharding.gather for the full array";
    }

    @Override
    public String readHint() {
        return "; read Sharding.gather(t) (the full array) or Sharding.localBlock(t) (this rank's block) instead";
    }
}
