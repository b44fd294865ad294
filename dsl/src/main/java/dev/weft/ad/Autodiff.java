package dev.weft.ad;

import dev.weft.DTypeException;
import dev.weft.Jvp;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.ValueAndGrad;
import dev.weft.Vjp;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/** The transforms behind {@code Weft.jvp}, {@code Weft.vjp} and {@code Weft.grad}. */
public final class Autodiff {
    private Autodiff() {
    }

    /** Forward mode: {@code f}'s outputs at {@code primals} and their tangents along {@code tangents}. */
    public static Jvp jvp(Function<List<Tensor>, List<Tensor>> f, List<Tensor> primals, List<Tensor> tangents) {
        if (primals.size() != tangents.size()) {
            throw new ShapeException(SourceLocation.capture(), "jvp: " + primals.size() + " primals but "
                    + tangents.size() + " tangents");
        }
        JvpInterpreter jvp = new JvpInterpreter();
        List<Tensor> duals = new ArrayList<>(primals.size());
        for (int i = 0; i < primals.size(); i++) {
            Tensor p = primals.get(i), t = tangents.get(i);
            if (p.dtype() != t.dtype() || !Arrays.equals(p.shape(), t.shape())) {
                throw new ShapeException(SourceLocation.capture(), "jvp: tangent " + i + " is "
                        + TensorAccess.aval(t) + " but its primal is " + TensorAccess.aval(p));
            }
            duals.add(p.dtype().isFloating() ? jvp.dual(p, t) : p);
        }
        List<Tensor> outs = Interpreters.with(jvp, () -> List.copyOf(f.apply(duals)));
        List<Tensor> values = new ArrayList<>(outs.size());
        List<Tensor> tangentsOut = new ArrayList<>(outs.size());
        for (Tensor o : outs) {
            Tensor p = jvp.primal(o), t = jvp.tangent(o);
            values.add(p);
            tangentsOut.add(t != null ? t : ArrayAdRules.zerosLike(p));
        }
        return new Jvp(values, tangentsOut);
    }

    /** Reverse mode: {@code f}'s outputs at {@code primals} and the pullback of cotangents to its inputs. */
    public static Vjp vjp(Function<List<Tensor>, List<Tensor>> f, List<Tensor> primals) {
        LinearRecorder recorder = new LinearRecorder();
        JvpInterpreter jvp = new JvpInterpreter();
        List<Tensor> inputs = new ArrayList<>(primals.size());
        List<Tensor> duals = new ArrayList<>(primals.size());
        for (Tensor p : primals) {
            Tensor in = p.dtype().isFloating() ? recorder.input(TensorAccess.aval(p)) : p;
            inputs.add(in);
            duals.add(in == p ? p : jvp.dual(p, in));
        }
        List<Tensor> outs = Interpreters.with(recorder, () -> Interpreters.with(jvp, () -> List.copyOf(
                f.apply(duals))));
        List<Tensor> values = new ArrayList<>(outs.size());
        List<Tensor> linearOuts = new ArrayList<>(outs.size());
        for (Tensor o : outs) {
            values.add(jvp.primal(o));
            linearOuts.add(jvp.tangent(o));
        }
        return new Vjp(values, cotangents -> {
            if (cotangents.size() != values.size()) {
                throw new ShapeException(SourceLocation.capture(), "pullback: " + cotangents.size()
                        + " cotangents for " + values.size() + " outputs");
            }
            for (int k = 0; k < values.size(); k++) {
                Tensor v = values.get(k), c = cotangents.get(k);
                if (v.dtype() != c.dtype() || !Arrays.equals(v.shape(), c.shape())) {
                    String message = "pullback: cotangent " + k + " is " + TensorAccess.aval(c) + " but output " + k
                            + " is " + TensorAccess.aval(v);
                    throw v.dtype() != c.dtype() ? new DTypeException(SourceLocation.capture(), message)
                            : new ShapeException(SourceLocation.capture(), message);
                }
            }
            return recorder.pullback(linearOuts, inputs, cotangents);
        });
    }

    /**
     * The gradient of {@code f}, whose argument must be floating (as in JAX: an integer's gradient would be zeros
     * that look like an answer) and whose result must be a floating scalar (one element).
     */
    public static Function<Tensor, Tensor> grad(Function<Tensor, Tensor> f) {
        return x -> valueAndGrad(f, x, "grad").grad();
    }

    /** {@code f}'s value and gradient, as {@link #grad}'s from one evaluation of {@code f}. */
    public static Function<Tensor, ValueAndGrad> valueAndGrad(Function<Tensor, Tensor> f) {
        return x -> valueAndGrad(f, x, "valueAndGrad");
    }

    private static ValueAndGrad valueAndGrad(Function<Tensor, Tensor> f, Tensor x, String name) {
        if (x != null && !x.dtype().isFloating()) {
            throw new DTypeException(SourceLocation.capture(), name + ": the argument must be f32 or f64, got "
                    + TensorAccess.aval(x) + "; cast it first, or use Weft.vjp, which passes integer inputs no"
                    + " cotangent");
        }
        Vjp v = vjp(xs -> List.of(f.apply(xs.getFirst())), List.of(x));
        Tensor y = v.outputs().getFirst();
        if (!y.dtype().isFloating() || y.size() != 1) {
            throw new DTypeException(SourceLocation.capture(), name + ": the function must return one f32 or f64"
                    + " element, got " + TensorAccess.aval(y) + " (use Weft.vjp for other results)");
        }
        return new ValueAndGrad(y, v.pullback(List.of(Tensor.full(y.dtype(), 1, y.shape()))).getFirst());
    }
}
