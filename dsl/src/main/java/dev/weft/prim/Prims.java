package dev.weft.prim;

import static dev.weft.spi.Errors.dtype;
import static dev.weft.spi.Errors.shape;

import dev.weft.DType;
import dev.weft.graph.Var;
import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.ShapeRule;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The array primitives and their shape rules. Binary elementwise primitives take operands of equal shape and
 * dtype; {@link dev.weft.Tensor} inserts {@link #BROADCAST_IN_DIM} for NumPy broadcasting before binding.
 */
public final class Prims {
    private Prims() {
    }

    private static final Map<ElementwiseOp, Primitive<?>> ELEMENTWISE = new EnumMap<>(ElementwiseOp.class);
    private static final Map<ElementwiseOp, Primitive<AxesParams>> REDUCTIONS = new EnumMap<>(ElementwiseOp.class);

    public static final Primitive<Params> ADD = arithmetic(ElementwiseOp.ADD, "add");
    public static final Primitive<Params> SUB = arithmetic(ElementwiseOp.SUB, "sub");
    public static final Primitive<Params> MUL = arithmetic(ElementwiseOp.MUL, "mul");
    public static final Primitive<Params> DIV = arithmetic(ElementwiseOp.DIV, "div");
    public static final Primitive<Params> POW = arithmetic(ElementwiseOp.POW, "pow");
    public static final Primitive<Params> MAX = arithmetic(ElementwiseOp.MAX, "maximum");
    public static final Primitive<Params> MIN = arithmetic(ElementwiseOp.MIN, "minimum");
    public static final Primitive<Params> REM = arithmetic(ElementwiseOp.REM, "rem");
    public static final Primitive<Params> ATAN2 = arithmetic(ElementwiseOp.ATAN2, "atan2");

    public static final Primitive<Params> LT = comparison(ElementwiseOp.LT);
    public static final Primitive<Params> LE = comparison(ElementwiseOp.LE);
    public static final Primitive<Params> GT = comparison(ElementwiseOp.GT);
    public static final Primitive<Params> GE = comparison(ElementwiseOp.GE);
    public static final Primitive<Params> EQ = comparison(ElementwiseOp.EQ);
    public static final Primitive<Params> NE = comparison(ElementwiseOp.NE);

    public static final Primitive<Params> NEG = unary(ElementwiseOp.NEG);
    public static final Primitive<Params> ABS = unary(ElementwiseOp.ABS);
    public static final Primitive<Params> EXP = unary(ElementwiseOp.EXP);
    public static final Primitive<Params> LOG = unary(ElementwiseOp.LOG);
    public static final Primitive<Params> SQRT = unary(ElementwiseOp.SQRT);
    public static final Primitive<Params> RSQRT = unary(ElementwiseOp.RSQRT);
    public static final Primitive<Params> TANH = unary(ElementwiseOp.TANH);
    public static final Primitive<Params> SIN = unary(ElementwiseOp.SIN);
    public static final Primitive<Params> COS = unary(ElementwiseOp.COS);

    /** {@code select(cond, onTrue, onFalse)}: all three of one shape, cond BOOL. */
    public static final Primitive<Params> SELECT = elementwise(ElementwiseOp.SELECT, Params.class, (in, p) -> {
        Aval c = in.get(0), a = in.get(1), b = in.get(2);
        if (c.dtype() != DType.BOOL) {
            throw dtype("where: condition must be bool, got %s", c.dtype().specName());
        }
        sameDType("where", a, b);
        if (!c.shape().equals(a.shape()) || !a.shape().equals(b.shape())) {
            throw shape("where: shapes %s, %s and %s differ", c.shape(), a.shape(), b.shape());
        }
        return List.of(a);
    });

    public static final Primitive<ConvertParams> CONVERT = elementwise(ElementwiseOp.CONVERT, ConvertParams.class,
            (in, p) -> List.of(new Aval(p.to(), in.get(0).shape())));

    public static final Primitive<AxesParams> REDUCE_SUM = reduction(ElementwiseOp.ADD, "reduce_sum", "sum");
    public static final Primitive<AxesParams> REDUCE_PROD = reduction(ElementwiseOp.MUL, "reduce_prod", "prod");
    public static final Primitive<AxesParams> REDUCE_MAX = reduction(ElementwiseOp.MAX, "reduce_max", "max");
    public static final Primitive<AxesParams> REDUCE_MIN = reduction(ElementwiseOp.MIN, "reduce_min", "min");

    /**
     * NumPy {@code matmul} for ranks 1 and 2, and batched for equal ranks above 2 with equal batch dimensions.
     */
    public static final Primitive<Params> MATMUL = pure("matmul", Params.class, (in, p) -> {
        Aval a = in.get(0), b = in.get(1);
        sameDType("matmul", a, b);
        numeric("matmul", a);
        Shape sa = a.shape(), sb = b.shape();
        int ra = sa.rank(), rb = sb.rank();
        if (ra == 0 || rb == 0 || (ra > 2 || rb > 2) && ra != rb) {
            throw shape("matmul: unsupported ranks %s @ %s (1-D, 2-D, or equal-rank batches)", sa, sb);
        }
        long ka = sa.dim(ra - 1), kb = sb.dim(rb == 1 ? 0 : rb - 2);
        if (ka != kb) {
            throw shape("matmul: contraction sizes differ: %s @ %s", sa, sb);
        }
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < ra - 2; i++) {
            if (sa.dim(i) != sb.dim(i)) {
                throw shape("matmul: batch dimensions differ: %s @ %s", sa, sb);
            }
            out.add(sa.dim(i));
        }
        if (ra >= 2) {
            out.add(sa.dim(ra - 2));
        }
        if (rb >= 2) {
            out.add(sb.dim(rb - 1));
        }
        return List.of(new Aval(a.dtype(), Shape.of(out.stream().mapToLong(Long::longValue).toArray())));
    });

    public static final Primitive<ReshapeParams> RESHAPE = pure("reshape", ReshapeParams.class, (in, p) -> {
        Aval a = in.get(0);
        if (a.shape().size() != p.shape().size()) {
            throw shape("reshape: cannot reshape %s (%d elements) to %s", a.shape(), a.shape().size(), p.shape());
        }
        return List.of(new Aval(a.dtype(), p.shape()));
    });

    public static final Primitive<TransposeParams> TRANSPOSE = pure("transpose", TransposeParams.class, (in, p) -> {
        Shape s = in.get(0).shape();
        int[] perm = p.toArray();
        if (perm.length != s.rank() || !isPermutation(perm)) {
            throw shape("transpose: %s is not a permutation of the %d axes of %s", p.permutation(), s.rank(), s);
        }
        long[] out = new long[perm.length];
        for (int i = 0; i < perm.length; i++) {
            out[i] = s.dim(perm[i]);
        }
        return List.of(new Aval(in.get(0).dtype(), Shape.of(out)));
    });

    public static final Primitive<BroadcastParams> BROADCAST_IN_DIM = pure("broadcast_in_dim", BroadcastParams.class,
            (in, p) -> {
                Shape s = in.get(0).shape();
                int[] dims = p.dimsArray();
                if (dims.length != s.rank()) {
                    throw shape("broadcast: %d dims given for an operand of rank %d", dims.length, s.rank());
                }
                int prev = -1;
                for (int i = 0; i < dims.length; i++) {
                    int d = dims[i];
                    if (d <= prev || d >= p.shape().rank()
                            || s.dim(i) != 1 && s.dim(i) != p.shape().dim(d)) {
                        throw shape("cannot broadcast %s to %s", s, p.shape());
                    }
                    prev = d;
                }
                return List.of(new Aval(in.get(0).dtype(), p.shape()));
            });

    public static final Primitive<SliceParams> SLICE = pure("slice", SliceParams.class, (in, p) -> {
        Shape s = in.get(0).shape();
        long[] start = p.startArray(), limit = p.limitArray();
        if (start.length != s.rank() || limit.length != s.rank()) {
            throw shape("slice: start %s and limit %s need %d entries for %s", p.start(), p.limit(), s.rank(), s);
        }
        long[] out = new long[s.rank()];
        for (int i = 0; i < out.length; i++) {
            if (start[i] < 0 || start[i] > limit[i] || limit[i] > s.dim(i)) {
                throw shape("slice: [%d, %d) is out of bounds for axis %d of %s", start[i], limit[i], i, s);
            }
            out[i] = limit[i] - start[i];
        }
        return List.of(new Aval(in.get(0).dtype(), Shape.of(out)));
    });

    public static final Primitive<ConcatParams> CONCAT = pure("concat", ConcatParams.class, (in, p) -> {
        if (in.isEmpty()) {
            throw shape("concat: no operands");
        }
        Aval first = in.get(0);
        int axis = p.axis();
        if (axis < 0 || axis >= first.shape().rank()) {
            throw shape("concat: axis %d out of range for %s", axis, first.shape());
        }
        long[] out = first.shape().dims();
        for (int k = 1; k < in.size(); k++) {
            Aval a = in.get(k);
            sameDType("concat", first, a);
            if (a.shape().rank() != out.length) {
                throw shape("concat: ranks differ: %s and %s", first.shape(), a.shape());
            }
            for (int i = 0; i < out.length; i++) {
                if (i != axis && a.shape().dim(i) != out[i]) {
                    throw shape("concat: %s and %s differ outside axis %d", first.shape(), a.shape(), axis);
                }
            }
            out[axis] += a.shape().dim(axis);
        }
        return List.of(new Aval(first.dtype(), Shape.of(out)));
    });

    public static final Primitive<PadParams> PAD = pure("pad", PadParams.class, (in, p) -> {
        Shape s = in.get(0).shape();
        long[] lo = p.lowArray(), hi = p.highArray();
        if (lo.length != s.rank() || hi.length != s.rank()) {
            throw shape("pad: low %s and high %s need %d entries for %s", p.low(), p.high(), s.rank(), s);
        }
        long[] out = new long[s.rank()];
        for (int i = 0; i < out.length; i++) {
            if (lo[i] < 0 || hi[i] < 0) {
                throw shape("pad: low %s and high %s must not be negative", p.low(), p.high());
            }
            out[i] = s.dim(i) + lo[i] + hi[i];
        }
        return List.of(new Aval(in.get(0).dtype(), Shape.of(out)));
    });

    /**
     * A block of {@code sizes} at a start given by operands [operand, start_0, ..., start_{r-1}] (integer scalars,
     * known only at run time). Each start is clamped to [0, dim - size], as in StableHLO and XLA, so the block is
     * always inside the operand.
     */
    public static final Primitive<DynamicSliceParams> DYNAMIC_SLICE = pure("dynamic_slice", DynamicSliceParams.class,
            (in, p) -> {
                Shape s = in.getFirst().shape();
                long[] sizes = p.sizesArray();
                starts("dynamic_slice", s, in.subList(1, in.size()));
                if (sizes.length != s.rank()) {
                    throw shape("dynamic_slice: sizes %s need %d entries for %s", p.sizes(), s.rank(), s);
                }
                for (int i = 0; i < sizes.length; i++) {
                    if (sizes[i] < 0 || sizes[i] > s.dim(i)) {
                        throw shape("dynamic_slice: size %d does not fit axis %d of %s", sizes[i], i, s);
                    }
                }
                return List.of(new Aval(in.getFirst().dtype(), Shape.of(sizes)));
            });

    /**
     * The operand with a block replaced: operands [operand, update, start_0, ..., start_{r-1}]; each start is
     * clamped to [0, dim - update dim], as in StableHLO and XLA.
     */
    public static final Primitive<Params> DYNAMIC_UPDATE_SLICE = pure("dynamic_update_slice", Params.class,
            (in, p) -> {
                Aval operand = in.get(0), update = in.get(1);
                sameDType("dynamic_update_slice", operand, update);
                Shape s = operand.shape(), u = update.shape();
                starts("dynamic_update_slice", s, in.subList(2, in.size()));
                if (u.rank() != s.rank()) {
                    throw shape("dynamic_update_slice: update %s and operand %s differ in rank", u, s);
                }
                for (int i = 0; i < s.rank(); i++) {
                    if (u.dim(i) > s.dim(i)) {
                        throw shape("dynamic_update_slice: update %s does not fit in %s", u, s);
                    }
                }
                return List.of(operand);
            });

    public static final Primitive<IotaParams> IOTA = pure("iota", IotaParams.class,
            (in, p) -> List.of(Aval.of(p.dtype(), p.n())));

    /** A concrete tensor used by a traced program (lifted by the tracer, never bound by user code). */
    public static final Primitive<ConstantParams> CONSTANT = pure("constant", ConstantParams.class,
            (in, p) -> List.of(new Aval(p.value().dtype(), Shape.of(p.value().shape()))));

    /**
     * A loop, {@code for (i = lo; i < hi; i++) carries = body(i, carries, captures)}: inputs
     * {@code [carries..., captures...]}, the closed body in its {@link LoopParams}; outputs the final carries.
     */
    public static final Primitive<LoopParams> FORI = pure("fori", LoopParams.class, Prims::fori);

    /**
     * A two-way branch: inputs {@code [pred (bool scalar), captures...]}, the closed branches in its
     * {@link CondParams}, each taking the captures; outputs those of the branch {@code pred} picks.
     */
    public static final Primitive<CondParams> COND = pure("cond", CondParams.class, Prims::cond);
    public static final Primitive<WhileParams> WHILE = pure("while", WhileParams.class, Prims::whileLoop);

    /**
     * A function with a user-given forward-mode rule ({@code Weft.customJvp}): inputs
     * {@code [arguments..., captures...]}, its closed body in its {@link CustomJvpParams}; outputs the body's.
     */
    public static final Primitive<CustomJvpParams> CUSTOM_JVP_CALL = pure("custom_jvp_call", CustomJvpParams.class,
            Prims::customCall);

    /**
     * A function with user-given forward and backward passes for reverse mode ({@code Weft.customVjp}): inputs
     * {@code [arguments..., captures...]}, its closed body in its {@link CustomVjpParams}; outputs the body's.
     */
    public static final Primitive<CustomVjpParams> CUSTOM_VJP_CALL = pure("custom_vjp_call", CustomVjpParams.class,
            Prims::customCall);

    private static List<Aval> fori(List<Aval> in, LoopParams p) {
        List<Aval> params = avals(p.body().params()), results = avals(p.body().results());
        if (params.size() != in.size() + 1 || !params.getFirst().equals(Aval.of(DType.I32))
                || !params.subList(1, params.size()).equals(in)) {
            throw new IllegalArgumentException("fori: body parameters " + params + " do not match i32[] and the"
                    + " inputs " + in);
        }
        if (results.size() > in.size()) {
            throw shape("fori: the body returns %d carries but the loop has %d", results.size(), in.size());
        }
        for (int k = 0; k < results.size(); k++) {
            same(in.get(k), results.get(k), "fori: the body returns carry " + k + " as %s but the loop carries %s");
        }
        return results;
    }

    private static List<Aval> whileLoop(List<Aval> in, WhileParams p) {
        List<Aval> results = avals(p.body().results());
        int n = results.size();
        if (!avals(p.body().params()).equals(in) || !avals(p.cond().params()).equals(in) || n > in.size()) {
            throw new IllegalArgumentException("while: region parameters do not match the inputs " + in);
        }
        for (int k = 0; k < n; k++) {
            same(in.get(k), results.get(k), "whileLoop: the body returns carry " + k + " as %s but the loop carries"
                    + " %s");
        }
        List<Aval> pred = avals(p.cond().results());
        if (pred.size() != 1 || pred.getFirst().dtype() != DType.BOOL || pred.getFirst().shape().rank() != 0) {
            throw dtype("whileLoop: the condition must return one bool scalar, got %s (reduce it, e.g. with"
                    + " .lt(tol) on a norm)", pred);
        }
        return results;
    }

    private static List<Aval> cond(List<Aval> in, CondParams p) {
        Aval pred = in.getFirst();
        if (pred.dtype() != DType.BOOL) {
            throw dtype("cond: the predicate must be bool, got %s", pred);
        }
        if (pred.shape().rank() != 0) {
            throw shape("cond: the predicate must be a scalar, got %s (reduce it, or use Tensor.where for an"
                    + " elementwise choice)", pred);
        }
        List<Aval> captures = in.subList(1, in.size());
        if (!avals(p.onTrue().params()).equals(captures) || !avals(p.onFalse().params()).equals(captures)) {
            throw new IllegalArgumentException("cond: branch parameters do not match the captures " + captures);
        }
        List<Aval> t = avals(p.onTrue().results()), f = avals(p.onFalse().results());
        if (t.size() != f.size()) {
            throw shape("cond: the branches return %d and %d tensors", t.size(), f.size());
        }
        for (int k = 0; k < t.size(); k++) {
            same(t.get(k), f.get(k), "cond: the false branch returns %s where the true branch returns %s (result "
                    + k + ")");
        }
        return t;
    }

    private static List<Aval> customCall(List<Aval> in, CustomCallParams p) {
        if (!avals(p.body().params()).equals(in) || p.arguments() > in.size()) {
            throw new IllegalArgumentException("custom call: body parameters " + avals(p.body().params())
                    + " do not match the inputs " + in);
        }
        return avals(p.body().results());
    }

    private static List<Aval> avals(List<Var> vars) {
        return vars.stream().map(Var::aval).toList();
    }

    /** {@code actual} must be {@code expected}; {@code fmt} takes the actual, then the expected aval. */
    private static void same(Aval expected, Aval actual, String fmt) {
        if (expected.dtype() != actual.dtype()) {
            throw dtype(fmt, actual, expected);
        }
        if (!expected.shape().equals(actual.shape())) {
            throw shape(fmt, actual, expected);
        }
    }

    private static <P extends Params> Primitive<P> pure(String name, Class<P> type, ShapeRule<P> rule) {
        return new Primitive<>(name, type, rule);
    }

    /** The primitive applying {@code op} (see {@link ElementwiseOp#primitive()}). */
    static Primitive<?> elementwise(ElementwiseOp op) {
        return ELEMENTWISE.get(op);
    }

    /** The reduction primitive folding with {@code op}, or null (see {@link ElementwiseOp#reduction()}). */
    static Primitive<AxesParams> reduction(ElementwiseOp op) {
        return REDUCTIONS.get(op);
    }

    private static <P extends Params> Primitive<P> elementwise(ElementwiseOp op, Class<P> type, ShapeRule<P> rule) {
        Primitive<P> prim = pure(op.primitiveName(), type, rule);
        ELEMENTWISE.put(op, prim);
        return prim;
    }

    /** A binary arithmetic primitive; {@code method} is the {@link dev.weft.Tensor} method that errors name. */
    private static Primitive<Params> arithmetic(ElementwiseOp op, String method) {
        return elementwise(op, Params.class, (in, p) -> {
            Aval a = in.get(0), b = in.get(1);
            sameDType(method, a, b);
            numeric(method, a);
            if (!op.accepts(a.dtype())) {
                throw dtype("%s: needs f32 or f64, got %s (cast first)", method, a.dtype().specName());
            }
            sameShape(method, a, b);
            return List.of(a);
        });
    }

    private static Primitive<Params> comparison(ElementwiseOp op) {
        String name = op.primitiveName();
        return elementwise(op, Params.class, (in, p) -> {
            Aval a = in.get(0), b = in.get(1);
            sameDType(name, a, b);
            sameShape(name, a, b);
            return List.of(new Aval(DType.BOOL, a.shape()));
        });
    }

    private static Primitive<Params> unary(ElementwiseOp op) {
        String name = op.primitiveName();
        return elementwise(op, Params.class, (in, p) -> {
            Aval a = in.get(0);
            numeric(name, a);
            if (!op.accepts(a.dtype())) {
                throw dtype("%s: needs f32 or f64, got %s (cast first)", name, a.dtype().specName());
            }
            return List.of(a);
        });
    }

    /**
     * A reduction primitive folding with {@code combiner}; {@code op} is the {@link dev.weft.Tensor} method that
     * errors name.
     */
    private static Primitive<AxesParams> reduction(ElementwiseOp combiner, String name, String op) {
        Primitive<AxesParams> prim = pure(name, AxesParams.class, (in, p) -> {
            Aval a = in.get(0);
            numeric(op, a);
            Shape s = a.shape();
            Set<Integer> axes = new HashSet<>();
            for (int ax : p.axes()) {
                if (ax < 0 || ax >= s.rank() || !axes.add(ax)) {
                    throw shape("%s: bad or repeated axis %d for %s", op, ax, s);
                }
            }
            long[] out = new long[s.rank() - axes.size()];
            for (int i = 0, j = 0; i < s.rank(); i++) {
                if (!axes.contains(i)) {
                    out[j++] = s.dim(i);
                }
            }
            return List.of(new Aval(a.dtype(), Shape.of(out)));
        });
        REDUCTIONS.put(combiner, prim);
        return prim;
    }

    private static void starts(String op, Shape s, List<Aval> starts) {
        if (starts.size() != s.rank()) {
            throw shape("%s: %d start indices for %s, which has rank %d", op, starts.size(), s, s.rank());
        }
        for (Aval a : starts) {
            if (a.shape().rank() != 0 || a.dtype() != DType.I32 && a.dtype() != DType.I64) {
                throw shape("%s: start indices must be i32 or i64 scalars, not %s", op, a);
            }
        }
    }

    private static void sameDType(String op, Aval a, Aval b) {
        if (a.dtype() != b.dtype()) {
            throw dtype("%s: dtypes differ: %s and %s (Weft never converts implicitly; use cast)", op,
                    a.dtype().specName(), b.dtype().specName());
        }
    }

    private static void sameShape(String op, Aval a, Aval b) {
        if (!a.shape().equals(b.shape())) {
            throw shape("%s: shapes differ: %s and %s", op, a.shape(), b.shape());
        }
    }

    private static void numeric(String op, Aval a) {
        if (a.dtype() == DType.BOOL) {
            throw dtype("%s: not defined on bool (cast first)", op);
        }
    }

    private static boolean isPermutation(int[] perm) {
        boolean[] seen = new boolean[perm.length];
        for (int p : perm) {
            if (p < 0 || p >= perm.length || seen[p]) {
                return false;
            }
            seen[p] = true;
        }
        return true;
    }
}
