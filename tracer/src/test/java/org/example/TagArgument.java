package org.example;

import dev.weft.tracer.ArgumentKind;

/** Registered in META-INF/services: shows that new argument kinds need no change to the gate. */
public final class TagArgument implements ArgumentKind {
    @Override
    public boolean accepts(Class<?> type) {
        return type == Tag.class;
    }

    @Override
    public Object key(Object value) {
        return ((Tag) value).name();
    }

    @Override
    public String description() {
        return "tags (Tag)";
    }
}
