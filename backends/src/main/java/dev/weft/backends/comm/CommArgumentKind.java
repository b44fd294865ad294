package dev.weft.backends.comm;

import dev.weft.comm.Comm;
import dev.weft.tracer.ArgumentKind;

/**
 * Lets {@code @Compile} methods take a {@link Comm}: the program is compiled per communicator (its identity is
 * part of the cache key, since the body may branch on its rank and size), a {@link dev.weft.comm.CartComm} too.
 */
public final class CommArgumentKind implements ArgumentKind {
    @Override
    public boolean accepts(Class<?> type) {
        return Comm.class.isAssignableFrom(type);
    }

    @Override
    public Object key(Object value) {
        return value;
    }

    @Override
    public String description() {
        return "communicators (Comm)";
    }
}
