package dev.weft.lowering.ir;

import dev.weft.LoweredModule;
import dev.weft.lowering.Target;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The lowered program: {@code @main} first, then any functions it calls (custom reductions). */
public final class Module implements LoweredModule {
    private final List<Func> functions;
    private final Target target;
    private final Map<String, Object> resources = new LinkedHashMap<>();

    public Module(Target target, List<Func> functions) {
        this.target = target;
        this.functions = new ArrayList<>(functions);
    }

    /** The target whose lowering rules produced it, and whose pipeline and executor it is for. */
    public Target target() {
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

    /** Run-time objects the IR refers to by name (communicators), bound while lowering. */
    public Map<String, Object> resources() {
        return resources;
    }

    /** The run-time object bound to {@code key}; fails if there is none. */
    public Object resource(String key) {
        Object r = resources.get(key);
        if (r == null) {
            throw new IllegalStateException("no resource '" + key + "' in the module");
        }
        return r;
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
