package dev.weft.ad;

import dev.weft.DTypeException;
import dev.weft.Jvp;
import dev.weft.ShapeException;
import dev.weft.Trees;
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
    /** The most elements {@link #jacfwd} and {@link #jacrev} build a Jacobian of, one direction each. */
    private static final int JACOBIAN_ELEMENTS = 1 << 12;

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
            recorder.assume(p, recorder.inputVariance(p));
            Tensor in = p.dtype().isFloating() ? recorder.input(TensorAccess.aval(p), recorder.inputVariance(p)) : p;
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

    /**
     * The gradients of {@code f}, a function of several tensors returning one floating element, with respect to the
     * arguments {@code argnums} (each floating), in that order.
     */
    public static Function<List<Tensor>, List<Tensor>> grad(Function<List<Tensor>, Tensor> f, int... argnums) {
        int[] picked = argnums.clone();
        return xs -> {
            SourceLocation where = SourceLocation.capture();
            if (picked.length == 0) {
                throw new ShapeException(where, "grad: name at least one argument to differentiate with respect to");
            }
            for (int a : picked) {
                if (a < 0 || a >= xs.size()) {
                    throw new ShapeException(where, "grad: argument " + a + " does not exist; the function was given "
                            + xs.size());
                }
                if (!xs.get(a).dtype().isFloating()) {
                    throw new DTypeException(where, "grad: argument " + a + " must be f32 or f64, got "
                            + TensorAccess.aval(xs.get(a)));
                }
            }
            List<Tensor> all = seededPullback("grad", vjp(in -> List.of(f.apply(in)), xs));
            List<Tensor> out = new ArrayList<>(picked.length);
            for (int a : picked) {
                out.add(all.get(a));
            }
            return out;
        };
    }

    /** {@code f}'s value and gradient, as {@link #grad}'s from one evaluation of {@code f}. */
    public static Function<Tensor, ValueAndGrad> valueAndGrad(Function<Tensor, Tensor> f) {
        return x -> valueAndGrad(f, x, "valueAndGrad");
    }

    private static ValueAndGrad valueAndGrad(Function<Tensor, Tensor> f, Tensor x, String name) {
        floating(name, x);
        Vjp v = vjp(xs -> List.of(f.apply(xs.getFirst())), List.of(x));
        return new ValueAndGrad(v.outputs().getFirst(), seededPullback(name, v).getFirst());
    }

    /** {@code f}'s value and gradient at the tree {@code at}: reverse mode on its leaves, integer ones passing zeros. */
    @SuppressWarnings("unchecked")
    public static <T> ValueAndGrad.Of<T> treeValueAndGrad(T at, Function<T, Tensor> f, String name) {
        List<Tensor> leaves = new ArrayList<>();
        Trees.Structure s = Trees.structure(at, leaves, "at");
        Vjp v = vjp(xs -> List.of(f.apply((T) s.rebuild(xs))), leaves);
        return new ValueAndGrad.Of<>(v.outputs().getFirst(), (T) s.rebuild(seededPullback(name, v)));
    }

    /**
     * The cotangents of {@code v}'s inputs for a cotangent 1 of its one output, which must be one f32 or f64
     * element (what {@code grad} differentiates).
     */
    private static List<Tensor> seededPullback(String name, Vjp v) {
        Tensor y = v.outputs().getFirst();
        if (!y.dtype().isFloating() || y.size() != 1) {
            throw new DTypeException(SourceLocation.capture(), name + ": the function must return one f32 or f64"
                    + " element, got " + TensorAccess.aval(y) + " (use Weft.vjp for other results)");
        }
        return v.pullback(List.of(Tensor.full(y.dtype(), 1, y.shape())));
    }

    /**
     * The Jacobian of {@code f} at {@code x} by forward mode, of shape {@code f(x).shape ++ x.shape}: one JVP per
     * element of {@code x}, each running {@code f} (for small functions; without {@code vmap} the columns are not
     * batched).
     */
    public static Function<Tensor, Tensor> jacfwd(Function<Tensor, Tensor> f) {
        return x -> {
            floating("jacfwd", x);
            int n = elements("jacfwd", x);
            if (n == 0) {
                Tensor y = f.apply(x);
                return Tensor.zeros(y.dtype(), concat(y.shape(), x.shape()));
            }
            Tensor[] columns = new Tensor[n];
            Tensor y = null;
            for (int j = 0; j < n; j++) {
                Jvp jv = jvp(xs -> List.of(f.apply(xs.getFirst())), List.of(x), List.of(oneHot(x, j)));
                y = jv.outputs().getFirst();
                columns[j] = jv.tangents().getFirst().reshape(1, y.size());
            }
            return Tensor.concat(0, columns).transpose(1, 0).reshape(concat(y.shape(), x.shape()));
        };
    }

    /**
     * The Jacobian of {@code f} at {@code x} by reverse mode, of shape {@code f(x).shape ++ x.shape}: {@code f} runs
     * once, its pullback once per element of {@code f(x)}.
     */
    public static Function<Tensor, Tensor> jacrev(Function<Tensor, Tensor> f) {
        return x -> {
            floating("jacrev", x);
            Vjp v = vjp(xs -> List.of(f.apply(xs.getFirst())), List.of(x));
            Tensor y = v.outputs().getFirst();
            int m = elements("jacrev", y);
            if (m == 0) {
                return Tensor.zeros(y.dtype(), concat(y.shape(), x.shape()));
            }
            Tensor[] rows = new Tensor[m];
            for (int i = 0; i < m; i++) {
                rows[i] = v.pullback(List.of(oneHot(y, i))).getFirst().reshape(1, x.size());
            }
            return Tensor.concat(0, rows).reshape(concat(y.shape(), x.shape()));
        };
    }

    /** Refuses an argument to differentiate with respect to that is not floating (its derivative would be zeros). */
    private static void floating(String name, Tensor x) {
        if (x != null && !x.dtype().isFloating()) {
            throw new DTypeException(SourceLocation.capture(), name + ": the argument must be f32 or f64, got "
                    + TensorAccess.aval(x) + "; cast it first, or use Weft.vjp, which passes integer inputs no"
                    + " cotangent");
        }
    }

    /** The elements of {@code t}, refused past what a Jacobian built element by element may have. */
    private static int elements(String name, Tensor t) {
        if (t.size() > JACOBIAN_ELEMENTS) {
            throw new ShapeException(SourceLocation.capture(), name + ": " + TensorAccess.aval(t) + " has "
                    + t.size() + " elements, more than the " + JACOBIAN_ELEMENTS + " a Jacobian is built for one by"
                    + " one; use jvp or vjp with the directions you need");
        }
        return (int) t.size();
    }

    /** A tensor of {@code like}'s dtype and shape, 1 at flat index {@code k} and 0 elsewhere (a constant). */
    private static Tensor oneHot(Tensor like, int k) {
        double[] e = new double[(int) like.size()];
        e[k] = 1;
        return Tensor.of(e, like.shape()).cast(like.dtype());
    }

    private static long[] concat(long[] a, long[] b) {
        long[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
