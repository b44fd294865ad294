package dev.weft;

import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.ConvertParams;
import dev.weft.prim.DynamicSliceParams;
import dev.weft.prim.IotaParams;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.ReshapeParams;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.AgentInstallation;
import dev.weft.spi.Args;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.BulkFill;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/**
 * An immutable n-dimensional array.
 *
 * <p>Outside a {@link Compile} method every operation runs at once on the CPU backend; inside one, operations
 * on the method's tensors are recorded and the tensors are <em>traced</em>: they have a dtype and shape but no
 * data, and reading them ({@link #item()}, {@code to*Array()}) raises {@link TracedValueException}.
 *
 * <p>Semantics: binary operations broadcast shapes like NumPy (align trailing axes; a size-1 axis stretches) and
 * require equal dtypes ({@link DType}); {@code double} operands take the tensor's dtype, and must be whole
 * numbers for integer tensors. Integer {@code div} and {@code rem} truncate toward zero (C, StableHLO); integer
 * division by zero is an error. Reductions keep the dtype ({@code sum} of i32 is i32). Negative axes count from
 * the end. Concrete tensors live in off-heap memory freed by the garbage collector, or earlier when the
 * {@link Scope} they were made in closes or when they are {@linkplain #donate() donated} to a compiled call.
 *
 * <p>Invalid arguments (shapes, axes, dtypes) raise {@link WeftException}s whose message starts with the caller's
 * {@code File.java:line} and quotes the arguments as written, eagerly and inside {@link Compile} alike; a
 * {@code null} argument (or element of a list or array argument) raises a {@link NullArgumentException}.
 */
public final class Tensor {
    static {
        TensorAccess.install(new TensorAccess.Impl() {
            @Override
            public Tensor concrete(Aval aval, MemorySegment data) {
                return new Tensor(aval, data, null);
            }

            @Override
            public Tensor traced(Traced traced) {
                return new Tensor(traced.aval(), null, traced);
            }

            @Override
            public MemorySegment data(Tensor t) {
                return t.data == null ? null : t.live();
            }

            @Override
            public boolean donated(Tensor t) {
                return t.donated && !t.pinned;
            }

            @Override
            public String unusable(Tensor t) {
                return t.freed == null ? null : t.unusableMessage();
            }

            @Override
            public void consume(Tensor t, String why, boolean freeBuffer) {
                if (freeBuffer) {
                    t.free(why);
                } else {
                    t.freed = why;
                }
            }

            @Override
            public void pin(Tensor t) {
                t.pinned = true;
            }

            @Override
            public Traced traced(Tensor t) {
                return t.traced;
            }

            @Override
            public Aval aval(Tensor t) {
                return t.aval;
            }
        });
    }

    private static final int PRINT_THRESHOLD = 1000;
    private static final int PRINT_EDGE = 3;
    /** One element of zero bits, of any dtype: what {@link #full} compares its first element with. */
    private static final MemorySegment ZERO_ELEMENT = MemorySegment.ofArray(new byte[Long.BYTES]);

    private final Aval aval;
    private final MemorySegment data;
    private final Traced traced;
    /** Why the buffer may no longer be used (freed by a scope, donated), or {@code null} while it may. */
    private String freed;
    /** Set by {@link #donate()}. */
    private boolean donated;
    /** Set when a compiled program captures this tensor as a constant: never freed before it is unreachable. */
    private boolean pinned;

    private Tensor(Aval aval, MemorySegment data, Traced traced) {
        AgentInstallation.ensure();
        this.aval = aval;
        this.data = data;
        this.traced = traced;
        if (data != null) {
            Scope.track(this);
        }
    }

    // ---- construction ----------------------------------------------------------------------------------------

    /** A tensor of {@code shape} (1-D of {@code data.length} when no shape is given) copied from {@code data}. */
    public static Tensor of(float[] data, long... shape) {
        Args.notNull(data, Tensor.class, "of", "data");
        Args.notNull(shape, Tensor.class, "of", "shape");
        return fromArray(DType.F32, data.length, shape, MemorySegment.ofArray(data));
    }

    /** As {@link #of(float[], long...)}. */
    public static Tensor of(double[] data, long... shape) {
        Args.notNull(data, Tensor.class, "of", "data");
        Args.notNull(shape, Tensor.class, "of", "shape");
        return fromArray(DType.F64, data.length, shape, MemorySegment.ofArray(data));
    }

    /** As {@link #of(float[], long...)}. */
    public static Tensor of(int[] data, long... shape) {
        Args.notNull(data, Tensor.class, "of", "data");
        Args.notNull(shape, Tensor.class, "of", "shape");
        return fromArray(DType.I32, data.length, shape, MemorySegment.ofArray(data));
    }

    /** As {@link #of(float[], long...)}. */
    public static Tensor of(long[] data, long... shape) {
        Args.notNull(data, Tensor.class, "of", "data");
        Args.notNull(shape, Tensor.class, "of", "shape");
        return fromArray(DType.I64, data.length, shape, MemorySegment.ofArray(data));
    }

    /** As {@link #of(float[], long...)}, BOOL. */
    public static Tensor of(boolean[] data, long... shape) {
        Args.notNull(data, Tensor.class, "of", "data");
        Args.notNull(shape, Tensor.class, "of", "shape");
        byte[] bytes = new byte[data.length];
        for (int i = 0; i < data.length; i++) {
            bytes[i] = (byte) (data[i] ? 1 : 0);
        }
        return fromArray(DType.BOOL, data.length, shape, MemorySegment.ofArray(bytes));
    }

    public static Tensor zeros(DType dtype, long... shape) {
        Args.notNull(dtype, Tensor.class, "zeros", "dtype");
        Args.notNull(shape, Tensor.class, "zeros", "shape");
        return full(dtype, 0, shape);
    }

    public static Tensor ones(DType dtype, long... shape) {
        Args.notNull(dtype, Tensor.class, "ones", "dtype");
        Args.notNull(shape, Tensor.class, "ones", "shape");
        return full(dtype, 1, shape);
    }

    /** A tensor of {@code shape} with every element {@code value} converted to {@code dtype}. */
    public static Tensor full(DType dtype, double value, long... shape) {
        Args.notNull(dtype, Tensor.class, "full", "dtype");
        Args.notNull(shape, Tensor.class, "full", "shape");
        Aval aval = new Aval(dtype, Shape.of(shape));
        MemorySegment seg = allocate(aval);
        long n = aval.shape().size();
        if (n > 0) {
            // no element loop (an optimizer's zeros for a 784x512 layer: 40 ms in the interpreter); the buffer comes
            // zeroed, so a value of zero bits (zeros, but not -0.0) is everywhere already
            put(seg, dtype, 0, value);
            long es = dtype.byteSize();
            if (MemorySegment.mismatch(seg, 0, es, ZERO_ELEMENT, 0, es) != -1) {
                BulkFill.byDoubling(seg, 0, es, n);
            }
        }
        return new Tensor(aval, seg, null);
    }

    /** A rank-0 tensor. */
    public static Tensor scalar(DType dtype, double value) {
        Args.notNull(dtype, Tensor.class, "scalar", "dtype");
        return full(dtype, value);
    }

    /** {@code [0, 1, ..., n-1]}. */
    public static Tensor arange(DType dtype, long n) {
        Args.notNull(dtype, Tensor.class, "arange", "dtype");
        if (dtype == DType.BOOL) {
            throw new DTypeException(SourceLocation.capture(), "arange: not defined on bool");
        }
        if (n < 0) {
            throw new ShapeException(SourceLocation.capture(), "arange: n = " + n + " is negative");
        }
        return bind1(Prims.IOTA, new IotaParams(dtype, n));
    }

    private static Tensor fromArray(DType dtype, int length, long[] shape, MemorySegment src) {
        Shape s = shape.length == 0 ? Shape.of(length) : Shape.of(shape);
        if (s.size() != length) {
            throw new ShapeException(SourceLocation.capture(),
                    "Tensor.of: shape " + s + " holds " + s.size() + " elements but " + length + " were given");
        }
        Aval aval = new Aval(dtype, s);
        MemorySegment seg = allocate(aval);
        seg.copyFrom(src);
        return new Tensor(aval, seg, null);
    }

    private static MemorySegment allocate(Aval aval) {
        return NativeMemory.allocate(aval);
    }

    // ---- metadata --------------------------------------------------------------------------------------------

    public DType dtype() {
        return aval.dtype();
    }

    /** A copy of the dimensions. */
    public long[] shape() {
        return aval.shape().dims();
    }

    public int rank() {
        return aval.shape().rank();
    }

    /** Number of elements. */
    public long size() {
        return aval.shape().size();
    }

    /**
     * True for a traced tensor (inside a {@link Compile} method) and for a sharded one ({@code dev.weft.shard}):
     * neither has data here.
     */
    public boolean isTraced() {
        return traced != null;
    }

    // ---- elementwise -----------------------------------------------------------------------------------------

    public Tensor add(Tensor o) {
        return binary("add", Prims.ADD, o);
    }

    public Tensor add(double v) {
        return add(weak(v));
    }

    public Tensor sub(Tensor o) {
        return binary("sub", Prims.SUB, o);
    }

    public Tensor sub(double v) {
        return sub(weak(v));
    }

    public Tensor mul(Tensor o) {
        return binary("mul", Prims.MUL, o);
    }

    public Tensor mul(double v) {
        return mul(weak(v));
    }

    public Tensor div(Tensor o) {
        return binary("div", Prims.DIV, o);
    }

    public Tensor div(double v) {
        return div(weak(v));
    }

    public Tensor pow(Tensor o) {
        return binary("pow", Prims.POW, o);
    }

    public Tensor pow(double v) {
        return pow(weak(v));
    }

    public Tensor maximum(Tensor o) {
        return binary("maximum", Prims.MAX, o);
    }

    public Tensor maximum(double v) {
        return maximum(weak(v));
    }

    public Tensor minimum(Tensor o) {
        return binary("minimum", Prims.MIN, o);
    }

    public Tensor minimum(double v) {
        return minimum(weak(v));
    }

    /** Remainder with the sign of the dividend (C {@code fmod}, StableHLO {@code remainder}), not NumPy's. */
    public Tensor rem(Tensor o) {
        return binary("rem", Prims.REM, o);
    }

    public Tensor rem(double v) {
        return rem(weak(v));
    }

    /**
     * The angle of the point {@code (x, this)} in radians, in {@code [-π, π]}: {@link Math#atan2 Math.atan2(this, x)}
     * elementwise, with its signed zeros and infinities (StableHLO {@code atan2}). Defined on f32 and f64.
     */
    public Tensor atan2(Tensor x) {
        return binary("atan2", Prims.ATAN2, x);
    }

    /** {@link #atan2(Tensor)} with {@code x} the same number everywhere. */
    public Tensor atan2(double x) {
        return atan2(weak(x));
    }

    public Tensor neg() {
        return bind1(Prims.NEG, Params.NONE, this);
    }

    public Tensor abs() {
        return bind1(Prims.ABS, Params.NONE, this);
    }

    public Tensor exp() {
        return bind1(Prims.EXP, Params.NONE, this);
    }

    public Tensor log() {
        return bind1(Prims.LOG, Params.NONE, this);
    }

    public Tensor sqrt() {
        return bind1(Prims.SQRT, Params.NONE, this);
    }

    public Tensor rsqrt() {
        return bind1(Prims.RSQRT, Params.NONE, this);
    }

    public Tensor tanh() {
        return bind1(Prims.TANH, Params.NONE, this);
    }

    public Tensor sin() {
        return bind1(Prims.SIN, Params.NONE, this);
    }

    public Tensor cos() {
        return bind1(Prims.COS, Params.NONE, this);
    }

    // ---- comparisons (BOOL results) --------------------------------------------------------------------------

    public Tensor lt(Tensor o) {
        return binary("lt", Prims.LT, o);
    }

    public Tensor lt(double v) {
        return lt(weak(v));
    }

    public Tensor le(Tensor o) {
        return binary("le", Prims.LE, o);
    }

    public Tensor le(double v) {
        return le(weak(v));
    }

    public Tensor gt(Tensor o) {
        return binary("gt", Prims.GT, o);
    }

    public Tensor gt(double v) {
        return gt(weak(v));
    }

    public Tensor ge(Tensor o) {
        return binary("ge", Prims.GE, o);
    }

    public Tensor ge(double v) {
        return ge(weak(v));
    }

    public Tensor eq(Tensor o) {
        return binary("eq", Prims.EQ, o);
    }

    public Tensor eq(double v) {
        return eq(weak(v));
    }

    public Tensor ne(Tensor o) {
        return binary("ne", Prims.NE, o);
    }

    public Tensor ne(double v) {
        return ne(weak(v));
    }

    /** Elementwise {@code cond ? a : b} with NumPy broadcasting of all three; {@code cond} must be BOOL. */
    public static Tensor where(Tensor cond, Tensor a, Tensor b) {
        Args.notNull(cond, Tensor.class, "where", "cond");
        Args.notNull(a, Tensor.class, "where", "a");
        Args.notNull(b, Tensor.class, "where", "b");
        Shape s = broadcastShape("where", broadcastShape("where", cond.aval.shape(), a.aval.shape()),
                b.aval.shape());
        return bind1(Prims.SELECT, Params.NONE, cond.broadcastShape(s), a.broadcastShape(s), b.broadcastShape(s));
    }

    /** {@link #where(Tensor, Tensor, Tensor)} with a number where {@code cond} is false, of {@code a}'s dtype. */
    public static Tensor where(Tensor cond, Tensor a, double b) {
        Args.notNull(a, Tensor.class, "where", "a");
        return where(cond, a, a.dtype() == DType.BOOL ? full(DType.BOOL, b) : a.weak(b));
    }

    /** {@link #where(Tensor, Tensor, Tensor)} with a number where {@code cond} is true, of {@code b}'s dtype. */
    public static Tensor where(Tensor cond, double a, Tensor b) {
        Args.notNull(b, Tensor.class, "where", "b");
        return where(cond, b.dtype() == DType.BOOL ? full(DType.BOOL, a) : b.weak(a), b);
    }

    private static Tensor where(Tensor cond, boolean a, Tensor b) {
        return where(cond, full(DType.BOOL, a ? 1 : 0), b);
    }

    /** Converts elements to {@code dtype} (floats to integers truncate toward zero; to BOOL is {@code != 0}). */
    public Tensor cast(DType dtype) {
        Args.notNull(dtype, Tensor.class, "cast", "dtype");
        return dtype == dtype() ? this : bind1(Prims.CONVERT, new ConvertParams(dtype), this);
    }

    // ---- reductions ------------------------------------------------------------------------------------------

    /** Sum over {@code axes} (all when none are given). */
    public Tensor sum(int... axes) {
        Args.notNull(axes, Tensor.class, "sum", "axes");
        return bind1(Prims.REDUCE_SUM, axesParams("sum", axes), this);
    }

    /** Arithmetic mean over {@code axes} (all when none are given); floating dtypes only. */
    public Tensor mean(int... axes) {
        Args.notNull(axes, Tensor.class, "mean", "axes");
        if (!dtype().isFloating()) {
            throw new DTypeException(SourceLocation.capture(),
                    "mean: needs f32 or f64, got " + dtype().specName() + " (cast first)");
        }
        AxesParams p = axesParams("mean", axes);
        long count = 1;
        for (int ax : p.axes()) {
            count *= aval.shape().dim(ax);
        }
        return sum(p.toArray()).div(count);
    }

    /** Maximum over {@code axes} (all when none are given); NaN propagates. */
    public Tensor max(int... axes) {
        Args.notNull(axes, Tensor.class, "max", "axes");
        return bind1(Prims.REDUCE_MAX, axesParams("max", axes), this);
    }

    /** Minimum over {@code axes} (all when none are given); NaN propagates. */
    public Tensor min(int... axes) {
        Args.notNull(axes, Tensor.class, "min", "axes");
        return bind1(Prims.REDUCE_MIN, axesParams("min", axes), this);
    }

    /** Product over {@code axes} (all when none are given). */
    public Tensor prod(int... axes) {
        Args.notNull(axes, Tensor.class, "prod", "axes");
        return bind1(Prims.REDUCE_PROD, axesParams("prod", axes), this);
    }

    /** {@link #sum(int...)}, keeping each reduced axis as a dimension of size 1 when {@code keepDims}. */
    public Tensor sum(boolean keepDims, int... axes) {
        Args.notNull(axes, Tensor.class, "sum", "axes");
        return kept(keepDims, "sum", axes, sum(axes));
    }

    /** {@link #mean(int...)}, keeping each reduced axis as a dimension of size 1 when {@code keepDims}. */
    public Tensor mean(boolean keepDims, int... axes) {
        Args.notNull(axes, Tensor.class, "mean", "axes");
        return kept(keepDims, "mean", axes, mean(axes));
    }

    /** {@link #max(int...)}, keeping each reduced axis as a dimension of size 1 when {@code keepDims}. */
    public Tensor max(boolean keepDims, int... axes) {
        Args.notNull(axes, Tensor.class, "max", "axes");
        return kept(keepDims, "max", axes, max(axes));
    }

    /** {@link #min(int...)}, keeping each reduced axis as a dimension of size 1 when {@code keepDims}. */
    public Tensor min(boolean keepDims, int... axes) {
        Args.notNull(axes, Tensor.class, "min", "axes");
        return kept(keepDims, "min", axes, min(axes));
    }

    /** {@link #prod(int...)}, keeping each reduced axis as a dimension of size 1 when {@code keepDims}. */
    public Tensor prod(boolean keepDims, int... axes) {
        Args.notNull(axes, Tensor.class, "prod", "axes");
        return kept(keepDims, "prod", axes, prod(axes));
    }

    /** {@code reduced} with size-1 dimensions where {@code axes} were, when {@code keepDims}. */
    private Tensor kept(boolean keepDims, String op, int[] axes, Tensor reduced) {
        if (!keepDims) {
            return reduced;
        }
        long[] dims = aval.shape().dims();
        for (int a : axesParams(op, axes).axes()) {
            dims[a] = 1;
        }
        return reduced.reshape(dims);
    }

    /**
     * The index (i64) of the largest element along {@code axis}, the first where several tie, the first NaN where
     * there is one (NumPy's {@code argmax}); the result lacks {@code axis}.
     */
    public Tensor argmax(int axis) {
        return argExtreme("argmax", axis, max(true, axis));
    }

    /** The index (i64) of the smallest element along {@code axis}, as {@link #argmax} (NumPy's {@code argmin}). */
    public Tensor argmin(int axis) {
        return argExtreme("argmin", axis, min(true, axis));
    }

    private Tensor argExtreme(String op, int axis, Tensor extreme) {
        if (dtype() == DType.BOOL) {
            throw new DTypeException(SourceLocation.capture(), op + ": not defined on bool (cast first)");
        }
        int a = axis(op, axis, this);
        long n = aval.shape().dim(a);
        Tensor hit = eq(extreme);
        if (dtype().isFloating()) {
            // a NaN is the extremum wherever one is (max and min propagate it), and NaN equals nothing
            hit = where(ne(this), true, hit);
        }
        long[] along = new long[rank()];
        Arrays.fill(along, 1);
        along[a] = n;
        Tensor index = arange(DType.I64, n).reshape(along);
        return where(hit, index, Tensor.scalar(DType.I64, n)).min(a);
    }

    /** The distinct axes named by {@code axes} (all when empty), sorted; errors quote {@code axes} as written. */
    private AxesParams axesParams(String op, int[] axes) {
        int r = rank();
        if (axes.length == 0) {
            return new AxesParams(IntStream.range(0, r).boxed().toList());
        }
        boolean[] named = distinctAxes(op, "axes", axes);
        return new AxesParams(IntStream.range(0, r).filter(i -> named[i]).boxed().toList());
    }

    /** Which of this tensor's axes {@code axes} name; each may be negative (from the end) but named only once. */
    private boolean[] distinctAxes(String op, String what, int[] axes) {
        boolean[] named = new boolean[rank()];
        for (int a : axes) {
            int n = axis(op, a, this);
            if (named[n]) {
                throw new ShapeException(SourceLocation.capture(), op + ": " + what + " " + Arrays.toString(axes)
                        + " name axis " + n + " twice");
            }
            named[n] = true;
        }
        return named;
    }

    /** {@code axis} of {@code t} in {@code [0, rank)}, counting a negative one from the end. */
    private static int axis(String op, int axis, Tensor t) {
        int r = t.rank();
        if (axis < -r || axis >= r) {
            throw new ShapeException(SourceLocation.capture(), op + ": axis " + axis + " is out of range for "
                    + t.aval + " (rank " + r + ", axes " + -r + " to " + (r - 1) + ")");
        }
        return axis < 0 ? axis + r : axis;
    }

    // ---- structure -------------------------------------------------------------------------------------------

    /**
     * NumPy {@code matmul}: 1-D and 2-D operands, and stacks of matrices whose leading (batch) dimensions broadcast
     * against each other ({@code [2,4,3] @ [3,2]} is {@code [2,4,2]}); a 1-D operand beside a stack is a row or
     * column vector, its dimension dropped from the result.
     */
    public Tensor matmul(Tensor o) {
        Args.notNull(o, Tensor.class, "matmul", "o");
        if (rank() <= 2 && o.rank() <= 2 || rank() == o.rank() && rank() > 2
                && Arrays.equals(Arrays.copyOf(shape(), rank() - 2), Arrays.copyOf(o.shape(), rank() - 2))) {
            return bind1(Prims.MATMUL, Params.NONE, this, o);
        }
        if (rank() == 0 || o.rank() == 0) {
            throw new ShapeException(SourceLocation.capture(), "matmul: " + aval + " @ " + o.aval + ": a scalar has"
                    + " no matrix dimensions (use mul)");
        }
        boolean row = rank() == 1, col = o.rank() == 1;
        Tensor a = row ? reshape(1, shape()[0]) : this, b = col ? o.reshape(o.shape()[0], 1) : o;
        long[] as = a.shape(), bs = b.shape();
        Shape batch = broadcastShape("matmul", Shape.of(Arrays.copyOf(as, as.length - 2)),
                Shape.of(Arrays.copyOf(bs, bs.length - 2)));
        long[] ta = concat(batch.dims(), as[as.length - 2], as[as.length - 1]);
        long[] tb = concat(batch.dims(), bs[bs.length - 2], bs[bs.length - 1]);
        Tensor out = a.broadcastTo(ta).matmul(b.broadcastTo(tb));
        long[] dims = out.shape();
        int r = dims.length;
        if (row || col) {
            long[] kept = concat(Arrays.copyOf(dims, r - 2), new long[0]);
            if (!row) {
                kept = concat(kept, dims[r - 2]);
            }
            if (!col) {
                kept = concat(kept, dims[r - 1]);
            }
            out = out.reshape(kept);
        }
        return out;
    }

    private static long[] concat(long[] a, long... b) {
        long[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** NumPy {@code dot} for 1-D and 2-D operands: the inner product of vectors, else {@link #matmul}. */
    public Tensor dot(Tensor o) {
        Args.notNull(o, Tensor.class, "dot", "o");
        if (rank() > 2 || o.rank() > 2) {
            throw new ShapeException(SourceLocation.capture(), "dot: " + aval + " and " + o.aval + ": for ranks above"
                    + " 2 use matmul (stacks of matrices) or sum of a product");
        }
        return matmul(o);
    }

    /**
     * Elements {@code [start, end)} along {@code axis} (NumPy's {@code x[..., start:end, ...]}): negative positions
     * count from the end, and both are clamped to the axis, as in Python.
     */
    public Tensor slice(int axis, long start, long end) {
        int a = axis("slice", axis, this);
        long n = aval.shape().dim(a);
        long lo = Math.clamp(start < 0 ? start + n : start, 0, n), hi = Math.clamp(end < 0 ? end + n : end, 0, n);
        long[] from = new long[rank()], to = shape();
        from[a] = lo;
        to[a] = Math.max(lo, hi);
        return slice(from, to);
    }

    /**
     * The elements at {@code indices} (an integer tensor) along {@code axis} (NumPy's {@code take}): the result's
     * shape is this one's with {@code axis} replaced by the indices' shape. A negative index counts from the end.
     * An index outside {@code [-n, n)} is an error naming the line when the indices are concrete; traced (inside
     * {@code @Compile} or a transform) it selects nothing and gives zeros. Each element is selected, never
     * multiplied, so infinities and NaNs elsewhere do not leak into it.
     */
    public Tensor take(Tensor indices, int axis) {
        Args.notNull(indices, Tensor.class, "take", "indices");
        if (!indices.dtype().isInteger()) {
            throw new DTypeException(SourceLocation.capture(), "take: indices must be i32 or i64, got "
                    + indices.aval);
        }
        int a = axis("take", axis, this);
        long n = aval.shape().dim(a);
        MemorySegment concrete = indices.traced == null ? indices.live() : null;
        if (concrete != null) {
            long[] idx = indices.cast(DType.I64).toLongArray();
            for (long i : idx) {
                if (i < -n || i >= n) {
                    throw new ShapeException(SourceLocation.capture(), "take: index " + i + " is out of range for"
                            + " axis " + a + " of " + aval + " (size " + n + ")");
                }
            }
        }
        Tensor idx = indices.cast(DType.I64);
        idx = where(idx.lt(0), idx.add(n), idx);
        int k = idx.rank();
        // x with axis moved last and indices' dimensions inserted before it: [.., 1.., n], selected where the index
        // equals the position along it, then summed over it
        int[] perm = IntStream.concat(IntStream.range(0, rank()).filter(i -> i != a), IntStream.of(a)).toArray();
        Tensor moved = transpose(perm);
        long[] rest = Arrays.copyOf(moved.shape(), rank() - 1);
        long[] xShape = concat(concat(Arrays.copyOf(rest, a), ones(k)), concat(Arrays.copyOfRange(rest, a,
                rest.length), n));
        Tensor x = moved.reshape(xShape);
        long[] iShape = concat(concat(ones(a), idx.shape()), concat(ones(rest.length - a), 1));
        Tensor hit = idx.reshape(iShape).eq(arange(DType.I64, n).reshape(concat(ones(iShape.length - 1), n)));
        Tensor zero = dtype() == DType.BOOL ? full(DType.BOOL, 0) : full(dtype(), 0);
        Tensor picked = where(hit, x, zero);
        return dtype() == DType.BOOL ? picked.cast(DType.I32).max(xShape.length - 1).cast(DType.BOOL)
                : picked.sum(xShape.length - 1);
    }

    private static long[] ones(int k) {
        long[] out = new long[k];
        Arrays.fill(out, 1);
        return out;
    }

    /** The same elements in a new shape; one dimension may be {@code -1} and is then inferred. */
    public Tensor reshape(long... shape) {
        Args.notNull(shape, Tensor.class, "reshape", "shape");
        long[] s = shape.clone();
        int infer = -1;
        long known = 1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == -1 && infer < 0) {
                infer = i;
            } else if (s[i] < 0) {
                throw new ShapeException(SourceLocation.capture(), "reshape: " + Arrays.toString(shape)
                        + (s[i] == -1 ? " has more than one -1" : " has the negative dimension " + s[i])
                        + " (one -1 may stand for the inferred dimension)");
            } else {
                known = Math.multiplyHigh(known, s[i]) != 0 || known * s[i] < 0 ? 0 : known * s[i];
            }
        }
        if (infer >= 0) {
            if (known == 0 || size() % known != 0) {
                throw new ShapeException(SourceLocation.capture(),
                        "reshape: cannot reshape " + aval + " (" + size() + " elements) to " + Arrays.toString(shape));
            }
            s[infer] = size() / known;
        }
        Shape target = Shape.of(s);
        return target.equals(aval.shape()) ? this : bind1(Prims.RESHAPE, new ReshapeParams(target), this);
    }

    /** Permutes axes: output axis {@code i} is input axis {@code perm[i]}; no argument reverses the axes. */
    public Tensor transpose(int... perm) {
        Args.notNull(perm, Tensor.class, "transpose", "perm");
        int r = rank();
        if (perm.length != 0 && perm.length != r) {
            throw new ShapeException(SourceLocation.capture(), "transpose: " + Arrays.toString(perm) + " names "
                    + perm.length + " axes but " + aval + " has " + r);
        }
        if (perm.length != 0) {
            distinctAxes("transpose", "permutation", perm);
        }
        int[] p = perm.length == 0 ? IntStream.range(0, r).map(i -> r - 1 - i).toArray()
                : Arrays.stream(perm).map(a -> a < 0 ? a + r : a).toArray();
        return bind1(Prims.TRANSPOSE, new TransposeParams(Arrays.stream(p).boxed().toList()), this);
    }

    /** NumPy {@code broadcast_to}. */
    public Tensor broadcastTo(long... shape) {
        Args.notNull(shape, Tensor.class, "broadcastTo", "shape");
        Shape target = Shape.of(shape);
        Shape s = aval.shape();
        boolean fits = s.rank() <= target.rank();
        for (int i = 0; fits && i < s.rank(); i++) {
            long d = s.dim(i);
            fits = d == 1 || d == target.dim(target.rank() - s.rank() + i);
        }
        if (!fits) {
            throw new ShapeException(SourceLocation.capture(), "broadcastTo: cannot broadcast " + aval + " to "
                    + Arrays.toString(shape));
        }
        return broadcastShape(target);
    }

    /** Elements {@code [start[i], limit[i])} along each axis. */
    public Tensor slice(long[] start, long[] limit) {
        Args.notNull(start, Tensor.class, "slice", "start");
        Args.notNull(limit, Tensor.class, "slice", "limit");
        return bind1(Prims.SLICE, new SliceParams(LongStream.of(start).boxed().toList(),
                LongStream.of(limit).boxed().toList()), this);
    }

    /**
     * The block of {@code sizes} starting at {@code start} (one i32 or i64 scalar per axis, which may be computed,
     * e.g. from a {@link Weft#fori} index): JAX's {@code lax.dynamic_slice}. Each start is clamped to
     * {@code [0, dim - size]}, so the block is always inside this tensor.
     */
    public Tensor dynamicSlice(List<Tensor> start, long... sizes) {
        Args.noNulls(start, Tensor.class, "dynamicSlice", "start");
        Args.notNull(sizes, Tensor.class, "dynamicSlice", "sizes");
        Tensor[] args = new Tensor[start.size() + 1];
        args[0] = this;
        for (int i = 0; i < start.size(); i++) {
            args[i + 1] = start.get(i);
        }
        return bind1(Prims.DYNAMIC_SLICE, new DynamicSliceParams(LongStream.of(sizes).boxed().toList()), args);
    }

    /**
     * This tensor with the block at {@code start} (one i32 or i64 scalar per axis) replaced by {@code update}:
     * JAX's {@code lax.dynamic_update_slice}. Each start is clamped to {@code [0, dim - update dim]}.
     */
    public Tensor dynamicUpdateSlice(Tensor update, List<Tensor> start) {
        Args.notNull(update, Tensor.class, "dynamicUpdateSlice", "update");
        Args.noNulls(start, Tensor.class, "dynamicUpdateSlice", "start");
        Tensor[] args = new Tensor[start.size() + 2];
        args[0] = this;
        args[1] = update;
        for (int i = 0; i < start.size(); i++) {
            args[i + 2] = start.get(i);
        }
        return bind1(Prims.DYNAMIC_UPDATE_SLICE, Params.NONE, args);
    }

    /** Joins tensors of one dtype along {@code axis}; other dimensions must agree. */
    public static Tensor concat(int axis, Tensor... parts) {
        Args.noNulls(parts, Tensor.class, "concat", "parts");
        if (parts.length == 0) {
            throw new ShapeException(SourceLocation.capture(), "concat: no operands");
        }
        int ax = axis("concat", axis, parts[0]);
        return bind1(Prims.CONCAT, new ConcatParams(ax), parts);
    }

    /** Adds {@code low[i]} elements before and {@code high[i]} after axis {@code i}, all equal to {@code value}. */
    public Tensor pad(long[] low, long[] high, double value) {
        Args.notNull(low, Tensor.class, "pad", "low");
        Args.notNull(high, Tensor.class, "pad", "high");
        return bind1(Prims.PAD, new PadParams(LongStream.of(low).boxed().toList(),
                LongStream.of(high).boxed().toList(), value), this);
    }

    /** {@link #pad(long[], long[], double)} with zeros. */
    public Tensor pad(long[] low, long[] high) {
        return pad(low, high, 0);
    }

    // ---- reading ---------------------------------------------------------------------------------------------

    /** The elements in row-major order, converted to float. */
    public float[] toFloatArray() {
        MemorySegment d = concrete("toFloatArray()");
        float[] out = new float[checkedLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) get(d, dtype(), i);
        }
        return out;
    }

    /** The elements in row-major order, converted to double. */
    public double[] toDoubleArray() {
        MemorySegment d = concrete("toDoubleArray()");
        double[] out = new double[checkedLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = get(d, dtype(), i);
        }
        return out;
    }

    /**
     * The elements in row-major order, converted to int (floats truncate toward zero); a value beyond the int
     * range (from i64) is a {@link DTypeException}.
     */
    public int[] toIntArray() {
        MemorySegment d = concrete("toIntArray()");
        int[] out = new int[checkedLength()];
        for (int i = 0; i < out.length; i++) {
            long v = getLong(d, dtype(), i);
            if (v != (int) v) {
                throw new DTypeException(SourceLocation.capture(), "toIntArray(): element " + i + " of " + aval
                        + " is " + v + ", which does not fit in an int (use toLongArray())");
            }
            out[i] = (int) v;
        }
        return out;
    }

    /** The elements in row-major order, converted to long (floats truncate toward zero). */
    public long[] toLongArray() {
        MemorySegment d = concrete("toLongArray()");
        long[] out = new long[checkedLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = getLong(d, dtype(), i);
        }
        return out;
    }

    /** The elements in row-major order as booleans ({@code != 0}). */
    public boolean[] toBooleanArray() {
        MemorySegment d = concrete("toBooleanArray()");
        boolean[] out = new boolean[checkedLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = get(d, dtype(), i) != 0;
        }
        return out;
    }

    /** The only element of a one-element tensor, as a double. */
    public double item() {
        MemorySegment d = concrete("item()");
        if (size() != 1) {
            throw new ShapeException(SourceLocation.capture(), "item() needs one element, " + aval + " has " + size());
        }
        return get(d, dtype(), 0);
    }

    private MemorySegment concrete(String what) {
        if (traced != null) {
            throw new TracedValueException(SourceLocation.capture(), what + " reads " + traced.describe()
                    + traced.readHint());
        }
        return live();
    }

    /** The buffer of a concrete tensor that may still be used. */
    private MemorySegment live() {
        if (freed != null) {
            throw new WeftException(SourceLocation.capture(), unusableMessage());
        }
        return data;
    }

    private String unusableMessage() {
        return "this " + aval + " tensor can no longer be used: " + freed;
    }

    /** Marks this tensor unusable for reason {@code why} and frees its buffer now, unless it is pinned. */
    void free(String why) {
        if (pinned || freed != null || data == null) {
            return;
        }
        freed = why;
        NativeMemory.free(data);
    }

    /**
     * Gives this tensor's buffer to the next {@link Compile} call it is passed to, as JAX's {@code donate_argnums}:
     * that call may write its result into the buffer instead of a fresh one, and afterwards this tensor can no
     * longer be used (doing so is a {@link WeftException} naming the line); if the result did not take the buffer,
     * the call frees it. So {@code y = step(y.donate())} updates {@code y} in place, without a new buffer per call
     * and without waiting for the garbage collector. Results are the same as without donation. Passed to eager
     * operations, or to a compiled call on a target other than the CPU, the tensor stays as it is. Inside a traced
     * method this does nothing.
     *
     * @return this tensor
     */
    public Tensor donate() {
        if (data != null) {
            live();
            donated = true;
        }
        return this;
    }

    private int checkedLength() {
        long n = size();
        if (n > Integer.MAX_VALUE - 8) {
            throw new ShapeException(SourceLocation.capture(), aval + " is too large for a Java array");
        }
        return (int) n;
    }

    static double get(MemorySegment seg, DType t, long i) {
        return switch (t) {
            case F32 -> seg.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case F64 -> seg.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
            case I32 -> seg.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
            case I64 -> seg.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            case BOOL -> seg.get(ValueLayout.JAVA_BYTE, i);
        };
    }

    private static long getLong(MemorySegment seg, DType t, long i) {
        return switch (t) {
            case I32 -> seg.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
            case I64 -> seg.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            default -> (long) get(seg, t, i);
        };
    }

    private static void put(MemorySegment seg, DType t, long i, double v) {
        switch (t) {
            case F32 -> seg.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) v);
            case F64 -> seg.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, v);
            case I32 -> seg.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) v);
            case I64 -> seg.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, (long) v);
            case BOOL -> seg.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
        }
    }

    // ---- binding ---------------------------------------------------------------------------------------------

    private Tensor binary(String op, Primitive<Params> prim, Tensor o) {
        Args.notNull(o, Tensor.class, op, "o");
        Shape s = broadcastShape(op, aval.shape(), o.aval.shape());
        return bind1(prim, Params.NONE, broadcastShape(s), o.broadcastShape(s));
    }

    /** A rank-0 tensor of this dtype holding {@code v} (a weakly typed Java scalar). */
    private Tensor weak(double v) {
        DType t = dtype();
        if (t == DType.BOOL) {
            throw new DTypeException(SourceLocation.capture(), "arithmetic with a number is not defined on bool");
        }
        if (t.isInteger() && (v != Math.rint(v) || Double.isInfinite(v))) {
            throw new DTypeException(SourceLocation.capture(),
                    v + " is not a whole number and cannot combine with a " + t.specName() + " tensor (cast first)");
        }
        return full(t, v);
    }

    private Tensor broadcastShape(Shape target) {
        Shape s = aval.shape();
        if (s.equals(target)) {
            return this;
        }
        int offset = target.rank() - s.rank();
        List<Integer> dims = IntStream.range(0, s.rank()).map(i -> i + offset).boxed().toList();
        return bind1(Prims.BROADCAST_IN_DIM, new BroadcastParams(target, dims), this);
    }

    private static Shape broadcastShape(String op, Shape a, Shape b) {
        if (a.equals(b)) {
            return a;
        }
        int r = Math.max(a.rank(), b.rank());
        long[] out = new long[r];
        for (int i = 0; i < r; i++) {
            int ia = a.rank() - r + i, ib = b.rank() - r + i;
            long da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
            if (da != db && da != 1 && db != 1) {
                throw new ShapeException(SourceLocation.capture(),
                        op + ": shapes " + a + " and " + b + " are not broadcast-compatible");
            }
            out[i] = da == 1 ? db : da;
        }
        return Shape.of(out);
    }

    private static Tensor bind1(Primitive<?> prim, Params params, Tensor... args) {
        return Bind.bind(prim, params, args).getFirst();
    }

    // ---- printing --------------------------------------------------------------------------------------------

    /** NumPy-style text of the elements (elided past 1000 elements); {@code Tensor(f32[2,3], traced)} if traced. */
    @Override
    public String toString() {
        if (traced != null) {
            return "Tensor(" + aval + ", traced)";
        }
        if (freed != null) {
            return "Tensor(" + aval + ", freed)";
        }
        StringBuilder b = new StringBuilder();
        long[] strides = aval.shape().strides();
        print(b, 0, 0, strides, size() > PRINT_THRESHOLD);
        return b.toString();
    }

    private void print(StringBuilder b, int axis, long offset, long[] strides, boolean elide) {
        if (axis == rank()) {
            b.append(format(get(data, dtype(), offset)));
            return;
        }
        long n = aval.shape().dim(axis);
        b.append('[');
        String separator = axis == rank() - 1 ? " " : "\n".repeat(rank() - axis - 1) + " ".repeat(axis + 1);
        for (long i = 0; i < n; i++) {
            if (i > 0) {
                b.append(separator);
            }
            if (elide && n > 2 * PRINT_EDGE && i == PRINT_EDGE) {
                b.append("...");
                i = n - PRINT_EDGE - 1;
                continue;
            }
            print(b, axis + 1, offset + i * strides[axis], strides, elide);
        }
        b.append(']');
    }

    private String format(double v) {
        return switch (dtype()) {
            case BOOL -> v != 0 ? "True" : "False";
            case I32, I64 -> Long.toString((long) v);
            case F32 -> formatFloating(v, Float.toString((float) v));
            case F64 -> formatFloating(v, Double.toString(v));
        };
    }

    private static String formatFloating(double v, String repr) {
        if (Double.isNaN(v)) {
            return "nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        return repr.endsWith(".0") ? repr.substring(0, repr.length() - 1) : repr;
    }
}
