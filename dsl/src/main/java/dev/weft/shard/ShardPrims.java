package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.ad.AdRules;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Primitive;
import java.util.List;

/** The primitive of {@link Sharding#constrain} in a traced program; the partitioner replaces it by a reshard. */
final class ShardPrims {
    private ShardPrims() {
    }

    /** The identity on values, marking the layout its result must have. Never lowered: partitioning removes it. */
    static final Primitive<ConstrainParams> CONSTRAIN = new Primitive<>("sharding_constraint", ConstrainParams.class,
            (in, p) -> List.of(in.getFirst()));

    static {
        AdRules.jvp(CONSTRAIN, (p, x, t, out) -> List.of(mark(t.getFirst(), p)));
        AdRules.transpose(CONSTRAIN, (p, ct, known, in) -> List.of(mark(ct.getFirst(), p)));
    }

    /** A tangent or cotangent laid out as its primal was asked to be (while tracing; the identity otherwise). */
    private static Tensor mark(Tensor t, ConstrainParams p) {
        return t == null || !Interpreters.isTracing() ? t : Bind.bind(CONSTRAIN, p, t).getFirst();
    }
}
