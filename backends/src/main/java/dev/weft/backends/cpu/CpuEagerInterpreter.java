package dev.weft.backends.cpu;

import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.graph.GraphEvaluator;
import dev.weft.prim.CondParams;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.NativeMemory;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs primitives at once on the CPU: each primitive maps to an {@link EagerRule} that calls the kernels of
 * {@link dev.weft.backends.cpu.kernels}. Results live in fresh 64-byte-aligned buffers freed by the garbage
 * collector. {@code fori}, {@code cond} and the custom functions evaluate their regions ({@link GraphEvaluator}): a
 * Java loop over the body, the branch the predicate picks, the function's body.
 */
public final class CpuEagerInterpreter implements Interpreter {
    private final Map<Primitive<?>, EagerRule<?>> rules = new ConcurrentHashMap<>();

    /** An interpreter with a rule for every primitive of {@link Prims} (control flow evaluates its regions). */
    public CpuEagerInterpreter() {
        StandardEagerRules.registerAll(this);
    }

    /** Makes {@code rule} the eager implementation of {@code prim}, replacing any earlier one. */
    public <P extends Params> void register(Primitive<P> prim, EagerRule<P> rule) {
        rules.put(prim, rule);
    }

    /** True if {@code prim} has an eager rule here (control flow always has). */
    public boolean has(Primitive<?> prim) {
        return rules.containsKey(prim) || prim == Prims.FORI || prim == Prims.WHILE || prim == Prims.COND
                || prim == Prims.CUSTOM_JVP_CALL
                || prim == Prims.CUSTOM_VJP_CALL;
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        if (params instanceof LoopParams p) {
            return GraphEvaluator.loop(p, args);
        }
        if (params instanceof CondParams p) {
            return GraphEvaluator.branch(p, args);
        }
        if (params instanceof WhileParams p) {
            return GraphEvaluator.whileLoop(p, args);
        }
        if (params instanceof CustomCallParams p) {
            return GraphEvaluator.evaluate(p.body(), args);
        }
        EagerRule<?> rule = rules.get(prim);
        if (rule == null) {
            throw new WeftException(located(where), "no eager implementation of primitive " + prim.name());
        }
        List<Aval> inAvals = new ArrayList<>(args.size());
        MemorySegment[] in = new MemorySegment[args.size()];
        for (int i = 0; i < in.length; i++) {
            Tensor t = args.get(i);
            in[i] = TensorAccess.data(t);
            if (in[i] == null) {
                throw new TracedValueException(located(where),
                        prim.name() + ": a traced tensor reached the eager interpreter");
            }
            inAvals.add(new Aval(t.dtype(), Shape.of(t.shape())));
        }
        MemorySegment[] out = new MemorySegment[outAvals.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = allocate(outAvals.get(i));
        }
        try {
            apply(prim, rule, params, inAvals, in, outAvals, out);
        } catch (ArithmeticException | IllegalArgumentException e) {
            throw new WeftException(located(where), prim.name() + ": " + e.getMessage(), e);
        }
        List<Tensor> results = new ArrayList<>(out.length);
        for (int i = 0; i < out.length; i++) {
            results.add(TensorAccess.concrete(outAvals.get(i), out[i]));
        }
        return results;
    }

    @SuppressWarnings("unchecked")
    private static <P extends Params> void apply(Primitive<P> prim, EagerRule<?> rule, Params params,
                                                 List<Aval> inAvals, MemorySegment[] in, List<Aval> outAvals,
                                                 MemorySegment[] out) {
        ((EagerRule<P>) rule).apply(prim.paramsType().cast(params), inAvals, in, outAvals, out);
    }

    /** A buffer for {@code aval}, at least one byte, aligned for vector loads. */
    static MemorySegment allocate(Aval aval) {
        return NativeMemory.allocate(aval);
    }

    private static SourceLocation located(SourceLocation where) {
        return where != null && !where.isUnknown() ? where : SourceLocation.capture();
    }
}
