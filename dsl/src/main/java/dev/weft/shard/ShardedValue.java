package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Traced;

/**
 * The payload of a sharded tensor: its global aval, this rank's block and its sharding. No trace owns it
 * ({@link #owner()} is never active): an operation on it outside any trace is partitioned at once
 * ({@link ShardedEager}); inside a trace it is an argument of a {@code @Compile} method or an error that names the
 * line and says what to do instead.
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
    public Interpreter eager() {
        return ShardedEager.INSTANCE;
    }

    @Override
    public String describe() {
        return "a sharded tensor " + aval + " (" + sharding + ")";
    }

    @Override
    public String usedAfterEnd() {
        return "inside a trace it is not an argument of (a transform inside @Compile, or a value captured by the"
                + " program): pass it to the @Compile method as an argument, or use Sharding.localBlock for this"
                + " rank's block or Sharding.gather for the full array";
    }

    @Override
    public String readHint() {
        return "; read Sharding.gather(t) (the full array) or Sharding.localBlock(t) (this rank's block) instead";
    }
}
