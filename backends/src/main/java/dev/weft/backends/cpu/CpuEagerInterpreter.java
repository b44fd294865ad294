package dev.weft.backends.cpu;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
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
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Runs primitives at once on the CPU: each primitive maps to an {@link EagerRule} that calls the kernels of
 * {@link dev.weft.backends.cpu.kernels}. Results live in fresh 64-byte-aligned buffers freed by the garbage
 * collector. {@code fori} is a Java loop and {@code cond} a Java branch.
 */
public final class CpuEagerInterpreter implements Interpreter {
    private final Map<Primitive<?>, EagerRule<?>> rules = new ConcurrentHashMap<>();

    /** An interpreter with a rule for every primitive of {@link dev.weft.prim.Prims} except the control flow. */
    public CpuEagerInterpreter() {
        StandardEagerRules.registerAll(this);
    }

    /** Makes {@code rule} the eager implementation of {@code prim}, replacing any earlier one. */
    public <P extends Params> void register(Primitive<P> prim, EagerRule<P> rule) {
        rules.put(prim, rule);
    }

    /** True if {@code prim} has an eager rule here. */
    public boolean has(Primitive<?> prim) {
        return rules.containsKey(prim);
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
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

    @Override
    public List<Tensor> fori(int lo, int hi, List<Tensor> init, BiFunction<Tensor, List<Tensor>, List<Tensor>> body,
                             SourceLocation where) {
        List<Tensor> carry = List.copyOf(init);
        for (int i = lo; i < hi; i++) {
            List<Tensor> next = body.apply(Tensor.scalar(DType.I32, i), carry);
            requireSameAvals(carry, next, where);
            carry = List.copyOf(next);
        }
        return carry;
    }

    @Override
    public List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                             SourceLocation where) {
        if (pred.dtype() != DType.BOOL) {
            throw new DTypeException(located(where), "cond: the predicate must be bool, got "
                    + TensorAccess.aval(pred));
        }
        if (pred.rank() != 0) {
            throw new ShapeException(located(where), "cond: the predicate must be a scalar, got "
                    + TensorAccess.aval(pred) + " (reduce it, or use Tensor.where for an elementwise choice)");
        }
        return List.copyOf(pred.item() != 0 ? onTrue.get() : onFalse.get());
    }

    @Override
    public boolean isTracing() {
        return false;
    }

    /** The body's carries must keep their dtypes and shapes; the messages are the traced loop's. */
    private static void requireSameAvals(List<Tensor> expected, List<Tensor> actual, SourceLocation where) {
        if (actual.size() != expected.size()) {
            throw new ShapeException(located(where), "fori: the body returns " + actual.size()
                    + " carries but the loop has " + expected.size());
        }
        for (int i = 0; i < expected.size(); i++) {
            Aval e = TensorAccess.aval(expected.get(i)), a = TensorAccess.aval(actual.get(i));
            if (!e.equals(a)) {
                String msg = "fori: the body returns carry " + i + " as " + a + " but the loop carries " + e;
                throw e.dtype() != a.dtype() ? new DTypeException(located(where), msg)
                        : new ShapeException(located(where), msg);
            }
        }
    }

    private static SourceLocation located(SourceLocation where) {
        return where != null && !where.isUnknown() ? where : SourceLocation.capture();
    }
}
