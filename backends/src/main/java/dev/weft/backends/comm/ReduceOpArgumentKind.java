package dev.weft.backends.comm;

import dev.weft.comm.ReduceOp;
import dev.weft.tracer.ArgumentKind;

/** Lets {@code @Compile} methods take a {@link ReduceOp}: a compile-time constant, keyed by identity. */
public final class ReduceOpArgumentKind implements ArgumentKind {
    @Override
    public boolean accepts(Class<?> type) {
        return type == ReduceOp.class;
    }

    @Override
    public Object key(Object value) {
        return value;
    }

    @Override
    public String description() {
        return "reduce operators (ReduceOp)";
    }
}
