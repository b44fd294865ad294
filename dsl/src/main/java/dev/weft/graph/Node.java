package dev.weft.graph;

import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * One primitive application: {@code outputs = prim[params](inputs)}. Control flow's params hold nested regions
 * ({@link RegionParams}). Regions are closed: each value from outside that a region uses is one of its capture
 * parameters, and the node receives the outer value as an input.
 * <ul>
 *   <li>{@code fori}: inputs {@code [carries..., captures...]}, params {@code LoopParams(lo, hi, body)}, the body
 *       with parameters {@code [i (i32 scalar), carries..., captures...]} returning the new carries; outputs are
 *       the final carries.</li>
 *   <li>{@code cond}: inputs {@code [pred (bool scalar), captures...]}, params {@code CondParams(onTrue, onFalse)},
 *       each region with parameters {@code [captures...]} (one list for both) returning the outputs.</li>
 *   <li>{@code custom_jvp_call}, {@code custom_vjp_call}: inputs {@code [arguments..., captures...]}, params a
 *       {@code CustomCallParams} (the function's body with those parameters, and the user's rules); outputs the
 *       body's.</li>
 * </ul>
 */
public final class Node {
    private final Primitive<?> prim;
    private final Params params;
    private final List<Var> inputs;
    private final List<Var> outputs;
    private final SourceLocation location;

    public Node(Primitive<?> prim, Params params, List<Var> inputs, List<Var> outputs, SourceLocation location) {
        this.prim = prim;
        this.params = params;
        this.inputs = List.copyOf(inputs);
        this.outputs = List.copyOf(outputs);
        this.location = location == null ? SourceLocation.UNKNOWN : location;
    }

    public Primitive<?> prim() {
        return prim;
    }

    public Params params() {
        return params;
    }

    public List<Var> inputs() {
        return inputs;
    }

    public List<Var> outputs() {
        return outputs;
    }

    /** The nested regions its params hold, in their order; none for a primitive without them. */
    public List<Region> regions() {
        return params instanceof RegionParams r ? r.regions() : List.of();
    }

    public SourceLocation location() {
        return location;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < outputs.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(outputs.get(i)).append(':').append(outputs.get(i).aval());
        }
        b.append(outputs.isEmpty() ? "" : " = ").append(prim.name());
        String p = params.toString();
        if (!p.isEmpty()) {
            b.append('[').append(p).append(']');
        }
        b.append(inputs.toString().replace('[', '(').replace(']', ')'));
        return b.append("  @ ").append(location).toString();
    }
}
