package dev.weft.graph;

import dev.weft.spi.Aval;

/** A value of the graph IR, defined once (by a node or as a region parameter). Compared by identity. */
public final class Var {
    private final int id;
    private final Aval aval;

    public Var(int id, Aval aval) {
        this.id = id;
        this.aval = aval;
    }

    /** Unique within its graph; used for printing. */
    public int id() {
        return id;
    }

    public Aval aval() {
        return aval;
    }

    @Override
    public String toString() {
        return "%" + id;
    }
}
