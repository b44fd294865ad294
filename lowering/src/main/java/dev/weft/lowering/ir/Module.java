package dev.weft.lowering.ir;

import dev.weft.LoweredModule;
import java.util.ArrayList;
import java.util.List;

/** The lowered program: {@code @main} first, then any functions it calls (custom reductions). */
public final class Module implements LoweredModule {
    private final List<Func> functions;
    private final String target;

    public Module(String target, List<Func> functions) {
        this.target = target;
        this.functions = new ArrayList<>(functions);
    }

    /** {@code "cpu"} or {@code "gpu"}: the target whose lowering rules produced it. */
    public String target() {
        return target;
    }

    public List<Func> functions() {
        return functions;
    }

    public Func main() {
        return functions.getFirst();
    }

    /** The function named {@code name}; fails if there is none. */
    public Func function(String name) {
        return functions.stream().filter(f -> f.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no function @" + name));
    }

    @Override
    public String toMlir() {
        return MlirPrinter.print(this);
    }

    @Override
    public String toString() {
        return toMlir();
    }
}
