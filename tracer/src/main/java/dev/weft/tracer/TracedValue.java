package dev.weft.tracer;

import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Traced;
import dev.weft.tracer.ir.Var;

/** The payload of a traced tensor: the graph variable it stands for and the trace that recorded it. */
record TracedValue(Var var, Interpreter owner) implements Traced {
    @Override
    public Aval aval() {
        return var.aval();
    }
}
