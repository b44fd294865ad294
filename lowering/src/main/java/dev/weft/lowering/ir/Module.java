package dev.weft.lowering.ir;

import dev.weft.LoweredModule;
import java.util.ArrayList;
import java.util.List;

/** The lowered program: {@code @main} first, then any functions it calls (custom reductions). */
public final class Module implements LoweredModule {
    private final List<Func> functions;
    private final String target;

    /** {@code target} names the {@code Target} whose lowering rules produced the functions. */
    public Module(String target, List<Func> functions) {
        this.target = target;
        this.functions = new ArrayList<>(functions);
    }

    /**
     * The name of the target whose lowering rules produced it, and whose pipeline and executor it is for (as MLIR
     * keeps a module's target among its attributes); {@code Targets.named} resolves it.
     */
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
