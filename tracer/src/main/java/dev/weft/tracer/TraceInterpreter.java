package dev.weft.tracer;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import dev.weft.tracer.ir.Graph;
import dev.weft.tracer.ir.Node;
import dev.weft.tracer.ir.Region;
import dev.weft.tracer.ir.Var;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Records the operations of one trace into a {@link Graph}. It keeps a stack of frames, one per region being
 * traced (the graph body, then one per enclosing {@code fori} body or {@code cond} branch). A value of an outer
 * frame used in an inner one becomes a capture parameter of every frame in between, and the node that owns the
 * region receives the outer value as an input; concrete tensors become {@link Prims#CONSTANT} nodes, once per
 * tensor per region.
 *
 * <p>Not thread-safe: one instance traces one graph on one thread.
 */
public final class TraceInterpreter implements Interpreter {
    private static final Aval INDEX = Aval.of(DType.I32);

    private final Deque<Frame> frames = new ArrayDeque<>();
    /** The values of finished fori bodies and cond branches, with the line of their loop or cond. */
    private final Map<Var, SourceLocation> finished = new HashMap<>();
    private int nextId;
    /** The communicators whose rank or size the program read, by identity, in order of first read. */
    private final List<CommHandle> commsRead = new ArrayList<>();

    TraceInterpreter() {
    }

    @Override
    public boolean isTracing() {
        return true;
    }

    @Override
    public void readComm(CommHandle comm) {
        if (commsRead.stream().noneMatch(c -> c == comm)) {
            commsRead.add(comm);
        }
    }

    /** The graph variable of a traced tensor of this trace, or {@code null} for a concrete tensor. */
    public Var varOf(Tensor t) {
        Traced tr = TensorAccess.traced(t);
        if (tr == null) {
            return null;
        }
        if (!(tr instanceof TracedValue v) || v.owner() != this) {
            throw new TracedValueException(SourceLocation.capture(),
                    "a traced tensor " + tr.aval() + " of another trace is used here; pass it as an argument");
        }
        return v.var();
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        if (prim == Prims.FORI || prim == Prims.COND) {
            throw new IllegalArgumentException(prim + " is recorded through Interpreter.fori/cond, not bound");
        }
        SourceLocation loc = where != null ? where : SourceLocation.capture();
        List<Var> inputs = new ArrayList<>(args.size());
        for (Tensor a : args) {
            inputs.add(operand(a, loc));
        }
        List<Var> outputs = fresh(outAvals);
        frames.peek().add(new Node(prim, params, inputs, outputs, List.of(), loc));
        return tensors(outputs);
    }

    @Override
    public List<Tensor> fori(int lo, int hi, List<Tensor> init, BiFunction<Tensor, List<Tensor>, List<Tensor>> body,
                             SourceLocation where) {
        SourceLocation loc = where != null ? where : SourceLocation.capture();
        List<Var> initVars = new ArrayList<>(init.size());
        for (Tensor t : init) {
            initVars.add(operand(t, loc));
        }
        Var index = fresh(INDEX);
        List<Var> carries = fresh(initVars.stream().map(Var::aval).toList());
        List<Var> params = new ArrayList<>();
        params.add(index);
        params.addAll(carries);
        Frame frame = new Frame(params);
        List<Var> results = traceRegion(frame, () -> body.apply(tensor(index), tensors(carries)), loc);
        if (results.size() != carries.size()) {
            throw new ShapeException(loc, "fori: the body returns " + results.size() + " carries but the loop has "
                    + carries.size());
        }
        for (int k = 0; k < results.size(); k++) {
            checkSame(carries.get(k).aval(), results.get(k).aval(), loc,
                    "fori: the body returns carry " + k + " as %s but the loop carries %s");
        }
        List<Var> inputs = new ArrayList<>(initVars);
        inputs.addAll(frame.capturedOuter());
        List<Var> outputs = fresh(carries.stream().map(Var::aval).toList());
        frames.peek().add(new Node(Prims.FORI, new LoopParams(lo, hi), inputs, outputs,
                List.of(frame.close(results)), loc));
        return tensors(outputs);
    }

    @Override
    public List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                             SourceLocation where) {
        SourceLocation loc = where != null ? where : SourceLocation.capture();
        Var p = operand(pred, loc);
        if (p.aval().dtype() != DType.BOOL) {
            throw new DTypeException(loc, "cond: the predicate must be bool, got " + p.aval());
        }
        if (p.aval().shape().rank() != 0) {
            throw new ShapeException(loc, "cond: the predicate must be a scalar, got " + p.aval()
                    + " (reduce it, or use Tensor.where for an elementwise choice)");
        }
        Frame t = new Frame(List.of());
        List<Var> tResults = traceRegion(t, onTrue, loc);
        Frame f = new Frame(List.of());
        List<Var> fResults = traceRegion(f, onFalse, loc);
        if (tResults.size() != fResults.size()) {
            throw new ShapeException(loc, "cond: the branches return " + tResults.size() + " and "
                    + fResults.size() + " tensors");
        }
        for (int k = 0; k < tResults.size(); k++) {
            checkSame(tResults.get(k).aval(), fResults.get(k).aval(), loc,
                    "cond: the false branch returns %s where the true branch returns %s (result " + k + ")");
        }
        Set<Var> union = new LinkedHashSet<>(t.capturedOuter());
        union.addAll(f.capturedOuter());
        List<Var> inputs = new ArrayList<>();
        inputs.add(p);
        inputs.addAll(union);
        List<Var> outputs = fresh(tResults.stream().map(Var::aval).toList());
        Region tRegion = t.close(branchParams(t, union), tResults);
        Region fRegion = f.close(branchParams(f, union), fResults);
        frames.peek().add(new Node(Prims.COND, Params.NONE, inputs, outputs, List.of(tRegion, fRegion), loc));
        return tensors(outputs);
    }

    /** Traces the graph body: {@code body} receives one traced tensor per input aval. */
    Graph trace(String name, List<Aval> inputs, Function<List<Tensor>, List<Tensor>> body) {
        List<Var> params = fresh(inputs);
        Frame root = new Frame(params);
        List<Var> results = traceRegion(root, () -> body.apply(tensors(params)), SourceLocation.UNKNOWN);
        return new Graph(name, root.close(results), commsRead);
    }

    /** Runs {@code body} with {@code frame} innermost and returns its results as variables of {@code frame}. */
    private List<Var> traceRegion(Frame frame, Supplier<List<Tensor>> body, SourceLocation loc) {
        frames.push(frame);
        try {
            List<Tensor> out = body.get();
            List<Var> results = new ArrayList<>(out.size());
            for (Tensor t : out) {
                results.add(operand(t, loc));
            }
            return results;
        } finally {
            frames.pop();
            if (!frames.isEmpty()) {
                frame.defined().forEach(v -> finished.put(v, loc));
            }
        }
    }

    /** Each branch's parameters for {@code union}: its capture parameter, or an unused one it does not need. */
    private List<Var> branchParams(Frame branch, Set<Var> union) {
        List<Var> params = new ArrayList<>(union.size());
        for (Var outer : union) {
            Var inner = branch.captureParamFor(outer);
            params.add(inner != null ? inner : fresh(outer.aval()));
        }
        return params;
    }

    /** {@code t} as a variable of the innermost frame: lifted if concrete, captured if from an outer frame. */
    private Var operand(Tensor t, SourceLocation loc) {
        Var v = varOf(t);
        if (v == null) {
            return frames.peek().constants().computeIfAbsent(t, c -> lift(c, loc));
        }
        Iterator<Frame> it = frames.iterator();
        Var resolved = resolve(v, it);
        if (resolved == null) {
            SourceLocation made = finished.getOrDefault(v, SourceLocation.UNKNOWN);
            throw new TracedValueException(loc.isUnknown() ? made : loc, "a traced tensor " + v.aval()
                    + " is used outside the fori body or cond branch that computed it"
                    + (made.isUnknown() ? "" : " (the Weft.fori or Weft.cond at " + made + ")")
                    + (loc.isUnknown() ? ", as a result of the @Compile method" : "")
                    + "; return it from the body or branch instead of keeping it");
        }
        return resolved;
    }

    /** {@code v} in the frame {@code it} yields next, capturing it there if an enclosing frame defines it. */
    private Var resolve(Var v, Iterator<Frame> it) {
        if (!it.hasNext()) {
            return null;
        }
        Frame frame = it.next();
        if (frame.defines(v)) {
            return v;
        }
        Var inner = frame.captureOf(v);
        if (inner != null) {
            return inner;
        }
        Var outer = resolve(v, it);
        if (outer == null) {
            return null;
        }
        inner = fresh(v.aval());
        frame.capture(v, outer, inner);
        return inner;
    }

    private Var lift(Tensor constant, SourceLocation loc) {
        Var out = fresh(new Aval(constant.dtype(), Shape.of(constant.shape())));
        frames.peek().add(new Node(Prims.CONSTANT, new ConstantParams(constant), List.of(), List.of(out), List.of(),
                loc));
        return out;
    }

    private static void checkSame(Aval expected, Aval actual, SourceLocation loc, String fmt) {
        if (expected.dtype() != actual.dtype()) {
            throw new DTypeException(loc, String.format(fmt, actual, expected));
        }
        if (!expected.shape().equals(actual.shape())) {
            throw new ShapeException(loc, String.format(fmt, actual, expected));
        }
    }

    private Var fresh(Aval aval) {
        return new Var(nextId++, aval);
    }

    private List<Var> fresh(List<Aval> avals) {
        List<Var> out = new ArrayList<>(avals.size());
        for (Aval a : avals) {
            out.add(fresh(a));
        }
        return out;
    }

    private Tensor tensor(Var v) {
        return TensorAccess.traced(new TracedValue(v, this));
    }

    private List<Tensor> tensors(List<Var> vars) {
        List<Tensor> out = new ArrayList<>(vars.size());
        for (Var v : vars) {
            out.add(tensor(v));
        }
        return out;
    }
}
