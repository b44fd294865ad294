package dev.weft.prim.reference;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.graph.GraphEvaluator;
import dev.weft.prim.AxesParams;
import dev.weft.prim.CondParams;
import dev.weft.prim.ConvertParams;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The eager interpreter of dsl's own tests: every primitive of {@link Prims} computed one element at a time on Java
 * arrays ({@link RefArray}), slowly and plainly, so that dsl's transforms (differentiation, batching, trees, the
 * optimizers, random numbers, files) are tested without a backend. It computes what the CPU backend's eager
 * interpreter computes: f32 and i32 results are those of f32 and i32 arithmetic (computed in double or long and
 * rounded or wrapped once), integer division by zero is an error, {@code convert} follows Java's casts, starts of
 * dynamic slices are clamped. Sums, products and matrix products of f32 accumulate in double, in row-major order;
 * f32 transcendental functions are Java's double functions rounded, so they may differ from a backend's in the
 * last bit. Control flow evaluates its regions with {@link GraphEvaluator}, as the backend does. No communication:
 * a test that needs ranks belongs with the backends. Its package is under {@code dev.weft.prim}, so that errors name
 * the user's line, not this class's ({@link SourceLocation#isInternal}).
 */
public final class ReferenceInterpreter implements Interpreter {
    /** One primitive's result from its operands. */
    @FunctionalInterface
    private interface Rule<P extends Params> {
        RefArray apply(P params, List<RefArray> in, Aval out);
    }

    private final Map<Primitive<?>, Rule<?>> rules = new IdentityHashMap<>();

    public ReferenceInterpreter() {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            register(op.primitive(), (p, in, out) -> elementwise(op, p, in, out));
            if (op.isReducible()) {
                register(op.reduction(), (p, in, out) -> reduce(op, p, in.getFirst(), out));
            }
        }
        register(Prims.MATMUL, (p, in, out) -> matmul(in.get(0), in.get(1), out));
        register(Prims.RESHAPE, (p, in, out) -> {
            RefArray r = result(out);
            for (int f = 0; f < r.size(); f++) {
                r.copy(f, in.getFirst(), f);
            }
            return r;
        });
        register(Prims.TRANSPOSE, (p, in, out) -> {
            int[] perm = p.toArray();
            return map(in.getFirst(), out, o -> {
                long[] i = new long[perm.length];
                for (int d = 0; d < perm.length; d++) {
                    i[perm[d]] = o[d];
                }
                return i;
            });
        });
        register(Prims.BROADCAST_IN_DIM, (p, in, out) -> {
            int[] dims = p.dimsArray();
            long[] from = in.getFirst().dims;
            return map(in.getFirst(), out, o -> {
                long[] i = new long[dims.length];
                for (int k = 0; k < dims.length; k++) {
                    i[k] = from[k] == 1 ? 0 : o[dims[k]];
                }
                return i;
            });
        });
        register(Prims.SLICE, (p, in, out) -> shifted(in.getFirst(), out, p.startArray()));
        register(Prims.DYNAMIC_SLICE, (p, in, out) -> shifted(in.getFirst(), out,
                starts(in.getFirst().dims, p.sizesArray(), in.subList(1, in.size()))));
        register(Prims.DYNAMIC_UPDATE_SLICE, (p, in, out) -> {
            RefArray operand = in.get(0), update = in.get(1);
            long[] start = starts(operand.dims, update.dims, in.subList(2, in.size()));
            RefArray r = map(operand, out, o -> o);
            for (int u = 0; u < update.size(); u++) {
                long[] i = update.unravel(u);
                for (int d = 0; d < i.length; d++) {
                    i[d] += start[d];
                }
                r.copy(r.ravel(i), update, u);
            }
            return r;
        });
        register(Prims.CONCAT, (p, in, out) -> {
            RefArray r = result(out);
            int axis = p.axis();
            for (int f = 0; f < r.size(); f++) {
                long[] o = r.unravel(f);
                int k = 0;
                while (o[axis] >= in.get(k).dims[axis]) {
                    o[axis] -= in.get(k).dims[axis];
                    k++;
                }
                r.copy(f, in.get(k), in.get(k).ravel(o));
            }
            return r;
        });
        register(Prims.PAD, (p, in, out) -> {
            RefArray a = in.getFirst(), r = result(out);
            long[] low = p.lowArray();
            for (int f = 0; f < r.size(); f++) {
                long[] i = r.unravel(f);
                boolean inside = true;
                for (int d = 0; d < i.length; d++) {
                    i[d] -= low[d];
                    inside &= i[d] >= 0 && i[d] < a.dims[d];
                }
                if (inside) {
                    r.copy(f, a, a.ravel(i));
                } else {
                    r.setFromDouble(f, p.value());
                }
            }
            return r;
        });
        register(Prims.IOTA, (p, in, out) -> {
            RefArray r = result(out);
            for (int f = 0; f < r.size(); f++) {
                r.setFromDouble(f, f);
            }
            return r;
        });
        register(Prims.CONSTANT, (p, in, out) -> RefArray.of(p.value()));
        Rule<Params> regions = (p, in, out) -> {
            throw new IllegalStateException("control flow runs its regions in bind");
        };
        for (Primitive<?> p : List.of(Prims.FORI, Prims.WHILE, Prims.COND, Prims.CUSTOM_JVP_CALL,
                Prims.CUSTOM_VJP_CALL)) {
            rules.put(p, regions);
        }
    }

    private <P extends Params> void register(Primitive<P> prim, Rule<P> rule) {
        rules.put(prim, rule);
    }

    /** True if {@code prim} has a rule here. */
    public boolean has(Primitive<?> prim) {
        return rules.containsKey(prim);
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        switch (params) {
            case LoopParams p -> {
                return GraphEvaluator.loop(p, args);
            }
            case CondParams p -> {
                return GraphEvaluator.branch(p, args);
            }
            case WhileParams p -> {
                return GraphEvaluator.whileLoop(p, args);
            }
            case CustomCallParams p -> {
                return GraphEvaluator.evaluate(p.body(), args);
            }
            default -> {
            }
        }
        Rule<?> rule = rules.get(prim);
        if (rule == null) {
            throw new WeftException(located(where), "no reference implementation of primitive " + prim.name());
        }
        List<RefArray> in = new ArrayList<>(args.size());
        for (Tensor t : args) {
            RefArray a = RefArray.of(t);
            if (a == null) {
                throw new TracedValueException(located(where),
                        prim.name() + ": a traced tensor reached the eager interpreter");
            }
            in.add(a);
        }
        try {
            return List.of(apply(prim, rule, params, in, outAvals.getFirst()).toTensor());
        } catch (ArithmeticException | IllegalArgumentException e) {
            throw new WeftException(located(where), prim.name() + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <P extends Params> RefArray apply(Primitive<P> prim, Rule<?> rule, Params params,
                                                     List<RefArray> in, Aval out) {
        return ((Rule<P>) rule).apply(prim.paramsType().cast(params), in, out);
    }

    private static RefArray result(Aval out) {
        return new RefArray(out.dtype(), out.shape().dims());
    }

    /** Each result element is the element of {@code a} at {@code from(its index)}. */
    private static RefArray map(RefArray a, Aval out, UnaryOperator<long[]> from) {
        RefArray r = result(out);
        for (int f = 0; f < r.size(); f++) {
            long[] o = r.unravel(f);
            r.copy(f, a, a.ravel(from.apply(o)));
        }
        return r;
    }

    /** The block of {@code a} starting at {@code start} ({@code slice}, {@code dynamic_slice}). */
    private static RefArray shifted(RefArray a, Aval out, long[] start) {
        return map(a, out, o -> {
            long[] i = new long[o.length];
            for (int d = 0; d < o.length; d++) {
                i[d] = start[d] + o[d];
            }
            return i;
        });
    }

    /** The start of a block of {@code sizes} in {@code dims}: each scalar operand clamped to [0, dim - size]. */
    private static long[] starts(long[] dims, long[] sizes, List<RefArray> scalars) {
        long[] start = new long[dims.length];
        for (int d = 0; d < dims.length; d++) {
            start[d] = Math.clamp(scalars.get(d).integer(0), 0, dims[d] - sizes[d]);
        }
        return start;
    }

    private static RefArray elementwise(ElementwiseOp op, Params p, List<RefArray> in, Aval out) {
        RefArray r = result(out), a = in.getFirst();
        for (int i = 0; i < r.size(); i++) {
            switch (op.form()) {
                case BINARY -> {
                    RefArray b = in.get(1);
                    if (a.isFloating()) {
                        r.setReal(i, real(op, a.real(i), b.real(i)));
                    } else {
                        r.setInteger(i, integer(op, a.integer(i), b.integer(i)));
                    }
                }
                case UNARY -> {
                    if (a.isFloating()) {
                        r.setReal(i, real(op, a.real(i), 0));
                    } else {
                        r.setInteger(i, integer(op, a.integer(i), 0));
                    }
                }
                case COMPARISON -> r.setInteger(i, compare(op, a, in.get(1), i) ? 1 : 0);
                case SELECT -> r.copy(i, a.integer(i) != 0 ? in.get(1) : in.get(2), i);
                case CONVERT -> convert(a, i, r, ((ConvertParams) p).to());
            }
        }
        return r;
    }

    /** {@code op} on floating values ({@code b} unused for a unary op). */
    private static double real(ElementwiseOp op, double a, double b) {
        return switch (op) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case POW -> Math.pow(a, b);
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case REM -> a % b;
            case NEG -> -a;
            case ABS -> Math.abs(a);
            case EXP -> Math.exp(a);
            case LOG -> Math.log(a);
            case SQRT -> Math.sqrt(a);
            case RSQRT -> 1 / Math.sqrt(a);
            case TANH -> Math.tanh(a);
            case SIN -> Math.sin(a);
            case COS -> Math.cos(a);
            case ATAN2 -> Math.atan2(a, b);
            case LT, LE, GT, GE, EQ, NE, SELECT, CONVERT -> throw new IllegalArgumentException(op + " is not arithmetic");
        };
    }

    /** {@code op} on integer values, wrapping ({@code b} unused for a unary op). */
    private static long integer(ElementwiseOp op, long a, long b) {
        return switch (op) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / nonZero(b);
            case POW -> power(a, b);
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case REM -> a % nonZero(b);
            case NEG -> -a;
            case ABS -> Math.abs(a);
            case EXP, LOG, SQRT, RSQRT, TANH, SIN, COS, ATAN2, LT, LE, GT, GE, EQ, NE, SELECT, CONVERT ->
                    throw new IllegalArgumentException(op + " is not defined on integers");
        };
    }

    private static long nonZero(long b) {
        if (b == 0) {
            throw new ArithmeticException("integer division by zero");
        }
        return b;
    }

    /** {@code base^exp} by squaring, wrapping; a negative power is 0 unless the base is 1 or -1. */
    private static long power(long base, long exp) {
        if (exp < 0) {
            return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
        }
        long result = 1;
        for (long e = exp, x = base; e != 0; e >>= 1, x *= x) {
            if ((e & 1) != 0) {
                result *= x;
            }
        }
        return result;
    }

    /** A comparison: of doubles for floating operands, of longs otherwise (bools as 0 and 1). */
    private static boolean compare(ElementwiseOp op, RefArray a, RefArray b, int i) {
        if (!a.isFloating()) {
            long p = a.integer(i), q = b.integer(i);
            return switch (op) {
                case LT -> p < q;
                case LE -> p <= q;
                case GT -> p > q;
                case GE -> p >= q;
                case EQ -> p == q;
                default -> p != q;
            };
        }
        double x = a.real(i), y = b.real(i);
        return switch (op) {
            case LT -> x < y;
            case LE -> x <= y;
            case GT -> x > y;
            case GE -> x >= y;
            case EQ -> x == y;
            default -> x != y;
        };
    }

    /** Element {@code i} of {@code a} converted to {@code to} by Java's casts (to bool: {@code != 0}). */
    private static void convert(RefArray a, int i, RefArray r, DType to) {
        if (a.isFloating()) {
            double v = a.real(i);
            switch (to) {
                case F32, F64 -> r.setReal(i, v);
                case I32 -> r.setInteger(i, (int) v);
                case I64 -> r.setInteger(i, (long) v);
                case BOOL -> r.setInteger(i, v != 0 ? 1 : 0);
            }
        } else {
            long v = a.integer(i);
            switch (to) {
                case F32 -> r.setReal(i, (float) v);
                case F64 -> r.setReal(i, (double) v);
                default -> r.setInteger(i, v);
            }
        }
    }

    /** Folds every element of {@code a} into its result element, in row-major order, from {@code op}'s identity. */
    private static RefArray reduce(ElementwiseOp op, AxesParams p, RefArray a, Aval out) {
        boolean[] reduced = new boolean[a.rank()];
        for (int axis : p.toArray()) {
            reduced[axis] = true;
        }
        int n = Math.toIntExact(out.shape().size());
        double[] reals = new double[n];
        long[] integers = new long[n];
        Number identity = op.identity(a.dtype);
        Arrays.fill(reals, identity.doubleValue());
        Arrays.fill(integers, identity.longValue());
        RefArray r = result(out);
        for (int f = 0; f < a.size(); f++) {
            long[] i = a.unravel(f);
            long[] o = new long[r.rank()];
            for (int d = 0, k = 0; d < i.length; d++) {
                if (!reduced[d]) {
                    o[k++] = i[d];
                }
            }
            int j = r.rank() == 0 ? 0 : r.ravel(o);
            if (a.isFloating()) {
                reals[j] = real(op, reals[j], a.real(f));
            } else {
                integers[j] = integer(op, integers[j], a.integer(f));
            }
        }
        for (int j = 0; j < n; j++) {
            if (a.isFloating()) {
                r.setReal(j, reals[j]);
            } else {
                r.setInteger(j, integers[j]);
            }
        }
        return r;
    }

    /** NumPy matmul: {@code out[b, i, j] = sum over k of a[b, i, k] b[b, k, j]}; a rank-1 side is a row or column. */
    private static RefArray matmul(RefArray a, RefArray b, Aval out) {
        int m = a.rank() >= 2 ? (int) a.dims[a.rank() - 2] : 1;
        int k = (int) a.dims[a.rank() - 1];
        int n = b.rank() >= 2 ? (int) b.dims[b.rank() - 1] : 1;
        RefArray r = result(out);
        int batches = r.size() / (m * n);
        for (int batch = 0; batch < batches; batch++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double real = 0;
                    long integer = 0;
                    for (int c = 0; c < k; c++) {
                        int x = (batch * m + i) * k + c, y = (batch * k + c) * n + j;
                        if (a.isFloating()) {
                            real += a.real(x) * b.real(y);
                        } else {
                            integer += a.integer(x) * b.integer(y);
                        }
                    }
                    int z = (batch * m + i) * n + j;
                    if (a.isFloating()) {
                        r.setReal(z, real);
                    } else {
                        r.setInteger(z, integer);
                    }
                }
            }
        }
        return r;
    }

    private static SourceLocation located(SourceLocation where) {
        return where != null && !where.isUnknown() ? where : SourceLocation.capture();
    }
}
