package dev.weft.ad;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.Prims;
import dev.weft.prim.ReshapeParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;

/**
 * JVP and transpose rules of the array primitives, one block per primitive. Tangents and cotangents are
 * {@code null} for zero. Where a derivative is not defined the rule picks JAX's convention: {@code abs} has slope 0
 * at 0; {@code maximum}/{@code minimum} split the tangent equally between tied operands; {@code max}/{@code min}
 * reductions share it equally among tied elements; {@code x ** y} has slope 0 in {@code y} at {@code x = 0}.
 * {@code prod} divides by the elements, so its derivative is NaN where an element is 0.
 */
final class ArrayAdRules {
    private ArrayAdRules() {
    }

    static void register() {
        // an embedded constant is invariant exactly when its value is the same on every rank (it may come from rank())
        AdRules.variance(Prims.CONSTANT, (p, in, outputs) -> VarianceRule.Typing.uniform(
                Variance.outside(p.value()), outputs));

        AdRules.jvp(Prims.ADD, (p, x, t, out) -> List.of(plus(t.get(0), t.get(1))));
        AdRules.transpose(Prims.ADD, (p, ct, k, in) -> List.of(ct.get(0), ct.get(0)));

        AdRules.jvp(Prims.SUB, (p, x, t, out) -> List.of(plus(t.get(0), neg(t.get(1)))));
        AdRules.transpose(Prims.SUB, (p, ct, k, in) -> List.of(ct.get(0), ct.get(0).neg()));

        AdRules.jvp(Prims.MUL, (p, x, t, out) -> List.of(plus(times(t.get(0), x.get(1)), times(t.get(1), x.get(0)))));
        AdRules.transpose(Prims.MUL, (p, ct, k, in) -> {
            linearIn("mul", k, 1);
            return k.get(0) == null ? List.of(ct.get(0).mul(k.get(1)), ct.get(0))
                    : Arrays.asList(null, ct.get(0).mul(k.get(0)));
        });

        AdRules.jvp(Prims.DIV, (p, x, t, out) -> List.of(plus(times(t.get(0), x.get(1).pow(-1)),
                times(t.get(1), out.getFirst().div(x.get(1)).neg()))));
        AdRules.transpose(Prims.DIV, (p, ct, k, in) -> {
            if (k.get(1) == null) {
                throw new IllegalStateException("div is not linear in its divisor");
            }
            return Arrays.asList(ct.get(0).div(k.get(1)), null);
        });

        AdRules.jvp(Prims.POW, (p, x, t, out) -> {
            Tensor base = x.get(0), exponent = x.get(1), y = out.getFirst();
            Tensor dBase = t.get(0) == null ? null : exponent.mul(base.pow(exponent.sub(1)));
            Tensor dExponent = t.get(1) == null ? null
                    : Tensor.where(base.eq(0), zerosLike(y), y.mul(base.log()));
            return List.of(plus(times(t.get(0), dBase), times(t.get(1), dExponent)));
        });

        AdRules.jvp(Prims.MAX, (p, x, t, out) -> List.of(split(x.get(0).gt(x.get(1)), x, t)));
        AdRules.jvp(Prims.MIN, (p, x, t, out) -> List.of(split(x.get(0).lt(x.get(1)), x, t)));

        // rem(x, y) = x - y * trunc(x / y), and trunc(x / y) = (x - rem) / y
        AdRules.jvp(Prims.REM, (p, x, t, out) -> List.of(plus(t.get(0),
                times(t.get(1), x.get(0).sub(out.getFirst()).div(x.get(1)).neg()))));

        // atan2(y, x): d = (x dy - y dx) / (x² + y²), NaN at the origin
        AdRules.jvp(Prims.ATAN2, (p, x, t, out) -> {
            Tensor y = x.get(0), xs = x.get(1), r2 = xs.mul(xs).add(y.mul(y));
            return List.of(plus(times(t.get(0), xs.div(r2)), times(t.get(1), y.neg().div(r2))));
        });

        AdRules.jvp(Prims.NEG, (p, x, t, out) -> List.of(t.get(0).neg()));
        AdRules.transpose(Prims.NEG, (p, ct, k, in) -> List.of(ct.get(0).neg()));
        AdRules.jvp(Prims.ABS, (p, x, t, out) -> List.of(t.get(0).mul(sign(x.get(0)))));
        AdRules.jvp(Prims.EXP, (p, x, t, out) -> List.of(t.get(0).mul(out.getFirst())));
        AdRules.jvp(Prims.LOG, (p, x, t, out) -> List.of(t.get(0).mul(x.get(0).pow(-1))));
        AdRules.jvp(Prims.SQRT, (p, x, t, out) -> List.of(t.get(0).mul(out.getFirst().pow(-1).mul(0.5))));
        AdRules.jvp(Prims.RSQRT, (p, x, t, out) -> List.of(t.get(0).mul(out.getFirst().div(x.get(0)).mul(-0.5))));
        AdRules.jvp(Prims.TANH, (p, x, t, out) -> {
            Tensor y = out.getFirst();
            return List.of(t.get(0).mul(y.mul(y).neg().add(1)));
        });
        AdRules.jvp(Prims.SIN, (p, x, t, out) -> List.of(t.get(0).mul(x.get(0).cos())));
        AdRules.jvp(Prims.COS, (p, x, t, out) -> List.of(t.get(0).mul(x.get(0).sin().neg())));

        for (Primitive<Params> cmp : List.of(Prims.LT, Prims.LE, Prims.GT, Prims.GE, Prims.EQ, Prims.NE)) {
            AdRules.jvp(cmp, (p, x, t, out) -> nothing());
        }
        AdRules.notDifferentiable(Prims.IOTA, "it has no inputs");
        AdRules.notDifferentiable(Prims.CONSTANT, "it has no inputs");

        AdRules.jvp(Prims.SELECT, (p, x, t, out) -> {
            if (t.get(1) == null && t.get(2) == null) {
                return nothing();
            }
            Tensor onTrue = t.get(1) != null ? t.get(1) : zerosLike(x.get(1));
            Tensor onFalse = t.get(2) != null ? t.get(2) : zerosLike(x.get(2));
            return List.of(Tensor.where(x.get(0), onTrue, onFalse));
        });
        AdRules.transpose(Prims.SELECT, (p, ct, k, in) -> {
            Tensor c = ct.get(0), zero = zerosLike(c);
            return Arrays.asList(null, Tensor.where(k.get(0), c, zero), Tensor.where(k.get(0), zero, c));
        });

        AdRules.jvp(Prims.CONVERT, (p, x, t, out) -> p.to().isFloating() && x.get(0).dtype().isFloating()
                ? List.of(t.get(0).cast(p.to())) : nothing());
        AdRules.transpose(Prims.CONVERT, (p, ct, k, in) -> List.of(ct.get(0).cast(in.get(0).dtype())));

        AdRules.jvp(Prims.REDUCE_SUM, (p, x, t, out) -> List.of(t.get(0).sum(p.toArray())));
        AdRules.transpose(Prims.REDUCE_SUM, (p, ct, k, in) -> List.of(expand(ct.get(0), in.get(0).shape(), p)));
        AdRules.jvp(Prims.REDUCE_PROD, (p, x, t, out) -> List.of(t.get(0)
                .mul(expand(out.getFirst(), Shape.of(x.get(0).shape()), p).div(x.get(0))).sum(p.toArray())));
        AdRules.jvp(Prims.REDUCE_MAX, ArrayAdRules::extremum);
        AdRules.jvp(Prims.REDUCE_MIN, ArrayAdRules::extremum);

        AdRules.jvp(Prims.MATMUL, (p, x, t, out) -> List.of(plus(t.get(0) == null ? null : t.get(0).matmul(x.get(1)),
                t.get(1) == null ? null : x.get(0).matmul(t.get(1)))));
        AdRules.transpose(Prims.MATMUL, ArrayAdRules::matmulTranspose);

        AdRules.jvp(Prims.RESHAPE, (p, x, t, out) -> List.of(bind(Prims.RESHAPE, p, t.get(0))));
        AdRules.transpose(Prims.RESHAPE, (p, ct, k, in) -> List.of(bind(Prims.RESHAPE,
                new ReshapeParams(in.get(0).shape()), ct.get(0))));

        AdRules.jvp(Prims.TRANSPOSE, (p, x, t, out) -> List.of(bind(Prims.TRANSPOSE, p, t.get(0))));
        AdRules.transpose(Prims.TRANSPOSE, (p, ct, k, in) -> {
            int[] perm = p.toArray();
            List<Integer> inverse = new ArrayList<>(perm.length);
            for (int i = 0; i < perm.length; i++) {
                inverse.add(0);
            }
            for (int i = 0; i < perm.length; i++) {
                inverse.set(perm[i], i);
            }
            return List.of(bind(Prims.TRANSPOSE, new TransposeParams(inverse), ct.get(0)));
        });

        AdRules.jvp(Prims.BROADCAST_IN_DIM, (p, x, t, out) -> List.of(bind(Prims.BROADCAST_IN_DIM, p, t.get(0))));
        AdRules.transpose(Prims.BROADCAST_IN_DIM, (p, ct, k, in) -> {
            Shape from = in.get(0).shape();
            int[] dims = p.dimsArray();
            boolean[] kept = new boolean[p.shape().rank()];
            for (int i = 0; i < dims.length; i++) {
                kept[dims[i]] = from.dim(i) == p.shape().dim(dims[i]);
            }
            int[] summed = IntStream.range(0, kept.length).filter(a -> !kept[a]).toArray();
            Tensor c = summed.length == 0 ? ct.get(0) : ct.get(0).sum(summed);
            return List.of(bind(Prims.RESHAPE, new ReshapeParams(from), c));
        });

        AdRules.jvp(Prims.SLICE, (p, x, t, out) -> List.of(bind(Prims.SLICE, p, t.get(0))));
        AdRules.transpose(Prims.SLICE, (p, ct, k, in) -> {
            long[] start = p.startArray(), limit = p.limitArray(), dims = in.get(0).shape().dims();
            long[] high = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                high[i] = dims[i] - limit[i];
            }
            return List.of(ct.get(0).pad(start, high));
        });

        AdRules.jvp(Prims.DYNAMIC_SLICE, (p, x, t, out) -> t.get(0) == null ? nothing()
                : List.of(t.get(0).dynamicSlice(x.subList(1, x.size()), p.sizesArray())));
        AdRules.transpose(Prims.DYNAMIC_SLICE, (p, ct, k, in) -> {
            List<Tensor> start = k.subList(1, k.size());
            List<Tensor> result = new ArrayList<>(Collections.nCopies(k.size(), (Tensor) null));
            result.set(0, zeros(in.get(0)).dynamicUpdateSlice(ct.get(0), start));
            return result;
        });

        AdRules.jvp(Prims.DYNAMIC_UPDATE_SLICE, (p, x, t, out) -> {
            if (t.get(0) == null && t.get(1) == null) {
                return nothing();
            }
            Tensor operand = t.get(0) != null ? t.get(0) : zerosLike(x.get(0));
            Tensor update = t.get(1) != null ? t.get(1) : zerosLike(x.get(1));
            return List.of(operand.dynamicUpdateSlice(update, x.subList(2, x.size())));
        });
        AdRules.transpose(Prims.DYNAMIC_UPDATE_SLICE, (p, ct, k, in) -> {
            List<Tensor> start = k.subList(2, k.size());
            List<Tensor> result = new ArrayList<>(Collections.nCopies(k.size(), (Tensor) null));
            result.set(0, ct.get(0).dynamicUpdateSlice(zeros(in.get(1)), start));
            result.set(1, ct.get(0).dynamicSlice(start, in.get(1).shape().dims()));
            return result;
        });

        AdRules.jvp(Prims.PAD, (p, x, t, out) -> t.get(0) == null ? nothing()
                : List.of(t.get(0).pad(p.lowArray(), p.highArray())));
        AdRules.transpose(Prims.PAD, (p, ct, k, in) -> {
            long[] low = p.lowArray(), dims = in.get(0).shape().dims(), limit = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                limit[i] = low[i] + dims[i];
            }
            return Arrays.asList(ct.get(0).slice(low, limit), null);
        });

        AdRules.jvp(Prims.CONCAT, (p, x, t, out) -> {
            Tensor[] parts = new Tensor[x.size()];
            for (int i = 0; i < parts.length; i++) {
                parts[i] = t.get(i) != null ? t.get(i) : zerosLike(x.get(i));
            }
            return List.of(bind(Prims.CONCAT, p, parts));
        });
        AdRules.transpose(Prims.CONCAT, (p, ct, k, in) -> {
            List<Tensor> parts = new ArrayList<>(in.size());
            long[] dims = ct.get(0).shape();
            long[] start = new long[dims.length];
            for (Aval a : in) {
                long[] limit = dims.clone();
                limit[p.axis()] = start[p.axis()] + a.shape().dim(p.axis());
                parts.add(ct.get(0).slice(start.clone(), limit));
                start[p.axis()] = limit[p.axis()];
            }
            return parts;
        });
    }

    private static List<Tensor> nothing() {
        return Arrays.asList((Tensor) null);
    }

    static Tensor plus(Tensor a, Tensor b) {
        return a == null ? b : b == null ? a : a.add(b);
    }

    private static Tensor neg(Tensor a) {
        return a == null ? null : a.neg();
    }

    /** {@code tangent * factor}, zero for a zero tangent; the factor is a constant of the linear map. */
    private static Tensor times(Tensor tangent, Tensor factor) {
        return tangent == null ? null : tangent.mul(factor);
    }

    static Tensor zerosLike(Tensor t) {
        return Tensor.zeros(t.dtype(), t.shape());
    }

    private static Tensor zeros(Aval a) {
        return Tensor.zeros(a.dtype(), a.shape().dims());
    }

    private static Tensor sign(Tensor x) {
        return x.gt(0).cast(x.dtype()).sub(x.lt(0).cast(x.dtype()));
    }

    /** The tangent of maximum/minimum: operand 0's where {@code first} holds, half of each on ties. */
    private static Tensor split(Tensor first, List<Tensor> x, List<Tensor> t) {
        DType d = x.get(0).dtype();
        Tensor w = first.cast(d).add(x.get(0).eq(x.get(1)).cast(d).mul(0.5));
        return plus(times(t.get(0), w), times(t.get(1), w.neg().add(1)));
    }

    /** The tangent of a max or min reduction: the mean tangent of the elements equal to the result. */
    private static List<Tensor> extremum(AxesParams p, List<Tensor> x, List<Tensor> t, List<Tensor> out) {
        Shape shape = Shape.of(x.get(0).shape());
        Tensor hit = x.get(0).eq(expand(out.getFirst(), shape, p)).cast(x.get(0).dtype());
        Tensor weight = hit.div(expand(hit.sum(p.toArray()), shape, p));
        return List.of(t.get(0).mul(weight).sum(p.toArray()));
    }

    /** {@code reduced} (the result of reducing {@code axes} of a {@code full}-shaped tensor) repeated along them. */
    static Tensor expand(Tensor reduced, Shape full, AxesParams axes) {
        boolean[] gone = new boolean[full.rank()];
        for (int a : axes.toArray()) {
            gone[a] = true;
        }
        List<Integer> dims = IntStream.range(0, full.rank()).filter(a -> !gone[a]).boxed().toList();
        return bind(Prims.BROADCAST_IN_DIM, new BroadcastParams(full, dims), reduced);
    }

    /**
     * Cotangents of {@code a @ b} with one operand linear: 1-D operands become matrices (a row, a column), then
     * {@code ct_a = ct @ b^T} and {@code ct_b = a^T @ ct} over the last two axes, batches alike.
     */
    private static List<Tensor> matmulTranspose(Params p, List<Tensor> ct, List<Tensor> k, List<Aval> in) {
        linearIn("matmul", k, 1);
        Shape sa = in.get(0).shape(), sb = in.get(1).shape();
        long[] a2 = sa.rank() == 1 ? new long[] {1, sa.dim(0)} : sa.dims();
        long[] b2 = sb.rank() == 1 ? new long[] {sb.dim(0), 1} : sb.dims();
        long[] out2 = a2.clone();
        out2[out2.length - 1] = b2[b2.length - 1];
        Tensor c = ct.get(0).reshape(out2);
        if (k.get(0) == null) {
            Tensor b = k.get(1).reshape(b2);
            return Arrays.asList(c.matmul(swapLast(b)).reshape(sa.dims()), null);
        }
        Tensor a = k.get(0).reshape(a2);
        return Arrays.asList(null, swapLast(a).matmul(c).reshape(sb.dims()));
    }

    private static Tensor swapLast(Tensor t) {
        int r = t.rank();
        int[] perm = IntStream.range(0, r).toArray();
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        return t.transpose(perm);
    }

    /** Fails unless exactly {@code count} inputs of a recorded application are linear. */
    private static void linearIn(String op, List<Tensor> known, int count) {
        if (known.stream().filter(v -> v == null).count() != count) {
            throw new IllegalStateException(op + " is applied to " + known.stream().filter(v -> v == null).count()
                    + " linear operands; a transposable application has " + count);
        }
    }

    private static Tensor bind(Primitive<?> prim, Params params, Tensor... args) {
        return Bind.bind(prim, params, args).getFirst();
    }
}
