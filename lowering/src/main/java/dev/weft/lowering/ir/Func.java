package dev.weft.lowering.ir;

import java.util.List;

/** A function: {@code func.func @name}; its result types are those of its body's terminator operands. */
public final class Func {
    private final String name;
    private final Block body;

    public Func(String name, Block body) {
        this.name = name;
        this.body = body;
    }

    public String name() {
        return name;
    }

    public Block body() {
        return body;
    }

    public List<Type> argumentTypes() {
        return body.arguments().stream().map(Value::type).toList();
    }

    public List<Type> resultTypes() {
        return body.results().stream().map(Value::type).toList();
    }
}
