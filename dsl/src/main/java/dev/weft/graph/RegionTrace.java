package dev.weft.graph;

import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Records what is bound on it into one closed {@link Region}: JAX's sub-trace of a loop body or branch. A tensor it
 * does not own is lifted: a concrete one becomes a {@link Prims#CONSTANT} node (once per tensor), a traced one of an
 * interpreter still on the stack (an enclosing trace or region, a transform's value of any level) becomes a capture
 * parameter, whose outer tensor ({@link #captured()}) the caller passes to the node that owns the region. A traced
 * tensor of a trace that has ended is a {@link TracedValueException} naming the line of use.
 *
 * <p>Not thread-safe: one instance records one region on one thread.
 */
public class RegionTrace implements Interpreter {
    /** A value this trace recorded. */
    public record Value(Var var, RegionTrace owner) implements Traced {
        @Override
        public Aval aval() {
            return var.aval();
        }

        @Override
        public String usedAfterEnd() {
            return owner.where.isUnknown() ? Traced.super.usedAfterEnd()
                    : "outside the fori body or cond branch that computed it (the Weft.fori or Weft.cond at "
                    + owner.where + "); return it from the body or branch instead of keeping it";
        }
    }

    private final VarIds ids;
    private final SourceLocation where;
    private final List<Var> params;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<Traced, Var> captures = new HashMap<>();
    private final List<Tensor> captured = new ArrayList<>();
    private final Map<Tensor, Var> constants = new IdentityHashMap<>();
    private List<Var> results;
    /** Whether it traces a body for eager code (no trace below it): it lifts values run eagerly by their own kind. */
    private boolean underEager;

    /**
     * A trace of a region with parameters of {@code params}; {@code where} is the line of the construct that owns
     * the region ({@link SourceLocation#UNKNOWN} for a whole program).
     */
    protected RegionTrace(VarIds ids, List<Aval> params, SourceLocation where) {
        this.ids = ids;
        this.where = where;
        List<Var> vars = new ArrayList<>(params.size());
        for (Aval a : params) {
            vars.add(ids.fresh(a));
        }
        this.params = List.copyOf(vars);
    }

    /** A trace for a nested region, numbering its variables on from the innermost enclosing trace's. */
    public static RegionTrace open(List<Aval> params, SourceLocation where) {
        RegionTrace outer = Interpreters.innermost(RegionTrace.class);
        RegionTrace r = new RegionTrace(outer != null ? outer.ids : new VarIds(), params, where);
        r.underEager = !Interpreters.isTracing();
        return r;
    }

    /** The region's own parameters, as tensors of this trace. */
    public List<Tensor> params() {
        return tensors(params);
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params p, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation at) {
        SourceLocation loc = at != null ? at : SourceLocation.capture();
        List<Var> inputs = new ArrayList<>(args.size());
        for (Tensor a : args) {
            inputs.add(operand(a, loc));
        }
        List<Var> outputs = new ArrayList<>(outAvals.size());
        for (Aval a : outAvals) {
            outputs.add(ids.fresh(a));
        }
        nodes.add(new Node(prim, p, inputs, outputs, loc));
        return tensors(outputs);
    }

    /** Passes the read down: the levels below record it if they trace a program. */
    @Override
    public void readComm(CommHandle comm) {
        Interpreters.under(this, () -> {
            Interpreters.current().readComm(comm);
            return null;
        });
    }

    /** A body traced for eager code captures a value with its own eager interpreter (a sharded tensor). */
    @Override
    public boolean lifts(Traced value) {
        return underEager && value.eager() != null;
    }

    /** Ends the region with {@code out} as its results (lifted like any operand). */
    public void close(List<Tensor> out) {
        List<Var> vars = new ArrayList<>(out.size());
        for (Tensor t : out) {
            vars.add(operand(t, where));
        }
        results = List.copyOf(vars);
    }

    /** The outer tensors this region captured, in the order of its capture parameters. */
    public List<Tensor> captured() {
        return List.copyOf(captured);
    }

    /** The tensors any of {@code traces} captured, each once, in order: the capture list regions of one node share. */
    public static List<Tensor> sharedCaptures(RegionTrace... traces) {
        Map<Traced, Tensor> union = new LinkedHashMap<>();
        for (RegionTrace r : traces) {
            for (Tensor c : r.captured) {
                union.putIfAbsent(TensorAccess.traced(c), c);
            }
        }
        return List.copyOf(union.values());
    }

    /** The closed region: its own parameters, then one capture parameter per {@link #captured()} tensor. */
    public Region region() {
        return region(captured);
    }

    /**
     * The closed region with capture parameters for {@code order}, a list of outer tensors that holds every one it
     * captured: one it did not capture gets an unused parameter (two branches of a {@code cond} share one list).
     */
    public Region region(List<Tensor> order) {
        if (results == null) {
            throw new IllegalStateException("the region is not closed");
        }
        List<Var> all = new ArrayList<>(params);
        for (Tensor t : order) {
            Var v = captures.get(TensorAccess.traced(t));
            all.add(v != null ? v : ids.fresh(TensorAccess.aval(t)));
        }
        return new Region(all, nodes, results);
    }

    /** {@code t} as a variable of this region: its own, a constant, or a capture. */
    private Var operand(Tensor t, SourceLocation loc) {
        Traced tr = TensorAccess.traced(t);
        if (tr == null) {
            return constants.computeIfAbsent(t, c -> constant(c, loc));
        }
        if (tr instanceof Value v && v.owner() == this) {
            return v.var();
        }
        if (!Interpreters.isActive(tr.owner()) && !lifts(tr)) {
            SourceLocation made = tr.owner() instanceof RegionTrace r ? r.where : SourceLocation.UNKNOWN;
            boolean result = loc.isUnknown();
            throw new TracedValueException(result ? made : loc, tr.describe()
                    + (result ? " returned as a result of the @Compile method" : "") + " is used "
                    + tr.usedAfterEnd());
        }
        return foreign(t, tr, loc);
    }

    /**
     * A tensor traced by another active interpreter, or one with its own eager interpreter captured by a body that
     * eager code traces (a sharded tensor): a capture parameter, once per value.
     */
    protected Var foreign(Tensor t, Traced traced, SourceLocation loc) {
        return captures.computeIfAbsent(traced, k -> {
            captured.add(t);
            return ids.fresh(traced.aval());
        });
    }

    private Var constant(Tensor value, SourceLocation loc) {
        TensorAccess.pin(value);
        Var out = ids.fresh(new Aval(value.dtype(), Shape.of(value.shape())));
        nodes.add(new Node(Prims.CONSTANT, new ConstantParams(value), List.of(), List.of(out), loc));
        return out;
    }

    private List<Tensor> tensors(List<Var> vars) {
        List<Tensor> out = new ArrayList<>(vars.size());
        for (Var v : vars) {
            out.add(TensorAccess.traced(new Value(v, this)));
        }
        return out;
    }
}
