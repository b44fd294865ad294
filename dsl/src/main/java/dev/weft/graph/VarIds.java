package dev.weft.graph;

import dev.weft.spi.Aval;

/** Numbers the variables of one graph, nested regions included, so that printed ids are unique. */
public final class VarIds {
    private int next;

    public Var fresh(Aval aval) {
        return new Var(next++, aval);
    }
}
