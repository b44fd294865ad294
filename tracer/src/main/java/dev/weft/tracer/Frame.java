package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.tracer.ir.Node;
import dev.weft.tracer.ir.Region;
import dev.weft.tracer.ir.Var;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A region under construction. Besides its own parameters it collects capture parameters: one per value of an
 * enclosing region that its nodes use, so that the finished region is closed.
 */
final class Frame {
    private final List<Var> params;
    private final Set<Var> defined = new HashSet<>();
    private final List<Node> nodes = new ArrayList<>();
    private final Map<Var, Var> captureByOriginal = new HashMap<>();
    private final List<Var> capturedOuter = new ArrayList<>();
    private final List<Var> captureInner = new ArrayList<>();
    private final Map<Tensor, Var> constants = new IdentityHashMap<>();

    Frame(List<Var> params) {
        this.params = List.copyOf(params);
        defined.addAll(params);
    }

    boolean defines(Var v) {
        return defined.contains(v);
    }

    /** Every value this region defines: its parameters, captures and node outputs. */
    Set<Var> defined() {
        return defined;
    }

    void add(Node node) {
        nodes.add(node);
        defined.addAll(node.outputs());
    }

    /** The capture parameter standing for {@code original} here, or {@code null} if it is not captured yet. */
    Var captureOf(Var original) {
        return captureByOriginal.get(original);
    }

    /**
     * Records that {@code original} (a value of an enclosing region, seen here as {@code inner}) enters this
     * region; {@code outer} is how the enclosing region names it.
     */
    void capture(Var original, Var outer, Var inner) {
        captureByOriginal.put(original, inner);
        capturedOuter.add(outer);
        captureInner.add(inner);
        defined.add(inner);
    }

    /** The enclosing region's values that this region captures, in parameter order. */
    List<Var> capturedOuter() {
        return List.copyOf(capturedOuter);
    }

    /** The capture parameter for the enclosing region's {@code outer}, or {@code null} if not captured. */
    Var captureParamFor(Var outer) {
        int i = capturedOuter.indexOf(outer);
        return i < 0 ? null : captureInner.get(i);
    }

    Map<Tensor, Var> constants() {
        return constants;
    }

    /** The finished region: its own parameters, then {@code captureParams}. */
    Region close(List<Var> captureParams, List<Var> results) {
        List<Var> all = new ArrayList<>(params);
        all.addAll(captureParams);
        return new Region(all, nodes, results);
    }

    /** The finished region with its own capture parameters. */
    Region close(List<Var> results) {
        return close(captureInner, results);
    }
}
