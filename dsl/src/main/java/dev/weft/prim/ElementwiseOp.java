package dev.weft.prim;

import dev.weft.DType;
import dev.weft.spi.Primitive;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The elementwise operations, each the one identity that every layer keys on: its primitive ({@link #primitive()},
 * named {@code name().toLowerCase()}), its lowered op ({@link #mlirName()}, plus {@link #direction()} for a
 * comparison; {@code Op.elementwise()} in the lowered IR gives it back), the dtypes it accepts ({@link #domain()}),
 * its {@link #form()} and arity, and, for a binary op that reductions fold with, its {@link #identity}.
 *
 * <p>Adding an elementwise op touches this list of files and nothing else:
 * <ol>
 *   <li>this enum: the constant;</li>
 *   <li>{@link Prims}: its primitive, built from the constant (and, for a reducible op, its reduction);</li>
 *   <li>{@code dev.weft.Tensor}: its method;</li>
 *   <li>{@code dev.weft.ad.ArrayAdRules}: its derivative;</li>
 *   <li>{@code backends/cpu/kernels/Elementwise}: its loop for each dtype it accepts (eager and the CPU
 *       executor's unfused ops);</li>
 *   <li>{@code backends/cpu/exec/FusedLoopGenerator}: its bytecode in {@code Body.apply} (fused CPU loops);</li>
 *   <li>{@code backends/cpu/exec/VectorLoopEmitter}: its Vector API method in {@code method}, or none;</li>
 *   <li>{@code backends/cpu/exec/CLoopEmitter}: its C in {@code apply}, or none in {@code hasC} (native fused
 *       loops);</li>
 *   <li>{@code backends/gpu/ptx/ScalarOps}: its PTX in {@code emit} (a new function's code in {@code PtxMath});</li>
 *   <li>dsl's test {@code ReferenceInterpreter}: its row in {@code real} and {@code integer}.</li>
 * </ol>
 * Lowering, the eager interpreter, batching, sharding, fusion and the verifier iterate over {@link #values()}. The
 * bytecode, C, Vector API and PTX switches are exhaustive, so the compiler names a missing row there, and
 * {@code ElementwiseCoverageTest} runs every constant through every emitter on every dtype it accepts.
 */
public enum ElementwiseOp {
    ADD(Form.BINARY, Domain.NUMERIC, "stablehlo.add", Identity.ZERO),
    SUB(Form.BINARY, Domain.NUMERIC, "stablehlo.subtract", null),
    MUL(Form.BINARY, Domain.NUMERIC, "stablehlo.multiply", Identity.ONE),
    DIV(Form.BINARY, Domain.NUMERIC, "stablehlo.divide", null),
    POW(Form.BINARY, Domain.NUMERIC, "stablehlo.power", null),
    MAX(Form.BINARY, Domain.NUMERIC, "stablehlo.maximum", Identity.LOWEST),
    MIN(Form.BINARY, Domain.NUMERIC, "stablehlo.minimum", Identity.HIGHEST),
    REM(Form.BINARY, Domain.NUMERIC, "stablehlo.remainder", null),
    ATAN2(Form.BINARY, Domain.FLOATING, "stablehlo.atan2", null),
    LT,
    LE,
    GT,
    GE,
    EQ,
    NE,
    NEG(Form.UNARY, Domain.NUMERIC, "stablehlo.negate", null),
    ABS(Form.UNARY, Domain.NUMERIC, "stablehlo.abs", null),
    EXP(Form.UNARY, Domain.FLOATING, "stablehlo.exponential", null),
    LOG(Form.UNARY, Domain.FLOATING, "stablehlo.log", null),
    SQRT(Form.UNARY, Domain.FLOATING, "stablehlo.sqrt", null),
    RSQRT(Form.UNARY, Domain.FLOATING, "stablehlo.rsqrt", null),
    TANH(Form.UNARY, Domain.FLOATING, "stablehlo.tanh", null),
    SIN(Form.UNARY, Domain.FLOATING, "stablehlo.sine", null),
    COS(Form.UNARY, Domain.FLOATING, "stablehlo.cosine", null),
    SELECT(Form.SELECT, Domain.ANY, "stablehlo.select", null),
    CONVERT(Form.CONVERT, Domain.ANY, "stablehlo.convert", null);

    /** How the operands and result relate, which fixes the arity. */
    public enum Form {
        /** One operand; the result has its dtype. */
        UNARY(1),
        /** Two operands of one dtype; the result has it. */
        BINARY(2),
        /** Two operands of one dtype; the result is BOOL. */
        COMPARISON(2),
        /** {@code (cond BOOL, onTrue, onFalse)}; the result has the dtype of the last two. */
        SELECT(3),
        /** One operand; the result's dtype is a parameter. */
        CONVERT(1);

        private final int arity;

        Form(int arity) {
            this.arity = arity;
        }
    }

    /** The dtypes of the operands (for {@link Form#SELECT}, of the last two) an op accepts. */
    public enum Domain {
        FLOATING, NUMERIC, ANY;

        public boolean accepts(DType t) {
            return switch (this) {
                case FLOATING -> t.isFloating();
                case NUMERIC -> t != DType.BOOL;
                case ANY -> true;
            };
        }
    }

    /** The identity a reduction starts from: {@code op(identity, x) == x} for every {@code x}. */
    private enum Identity {
        ZERO, ONE, LOWEST, HIGHEST
    }

    private static final Map<String, ElementwiseOp> BY_LOWERED = new HashMap<>();

    static {
        for (ElementwiseOp op : values()) {
            BY_LOWERED.put(key(op.mlirName, op.direction()), op);
        }
    }

    private final Form form;
    private final Domain domain;
    private final String mlirName;
    private final Identity identity;

    /** A comparison: {@code stablehlo.compare} with this constant's name as its direction. */
    ElementwiseOp() {
        this(Form.COMPARISON, Domain.ANY, "stablehlo.compare", null);
    }

    ElementwiseOp(Form form, Domain domain, String mlirName, Identity identity) {
        this.form = form;
        this.domain = domain;
        this.mlirName = mlirName;
        this.identity = identity;
    }

    public Form form() {
        return form;
    }

    public int arity() {
        return form.arity;
    }

    public Domain domain() {
        return domain;
    }

    /** True if the op is defined on operands of {@code t} (for {@link Form#SELECT}, on its last two). */
    public boolean accepts(DType t) {
        return domain.accepts(t);
    }

    /** The lowered op's name ({@code stablehlo.add}); the comparisons share {@code stablehlo.compare}. */
    public String mlirName() {
        return mlirName;
    }

    /** The {@code comparison_direction} of a {@link Form#COMPARISON} ({@code LT}, ...), else null. */
    public String direction() {
        return form == Form.COMPARISON ? name() : null;
    }

    /** The primitive's name, which is also how {@link Prims} and the IR print it. */
    public String primitiveName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The primitive applying this op ({@link Prims#ADD}, ...). */
    public Primitive<?> primitive() {
        return Prims.elementwise(this);
    }

    /** True for a binary op that reductions fold with: it is associative and commutative and has an identity. */
    public boolean isReducible() {
        return identity != null;
    }

    /** The reduction primitive folding with this op ({@link Prims#REDUCE_SUM} for {@link #ADD}, ...). */
    public Primitive<AxesParams> reduction() {
        return Prims.reduction(this);
    }

    /**
     * The identity of this {@link #isReducible} op on {@code t}: a {@link Long} for integer dtypes, a {@link Double}
     * for floating ones ({@code -inf} for {@link #MAX}).
     */
    public Number identity(DType t) {
        if (identity == null || t == DType.BOOL) {
            throw new IllegalArgumentException(this + " has no identity on " + t);
        }
        if (t.isFloating()) {
            return switch (identity) {
                case ZERO -> 0.0;
                case ONE -> 1.0;
                case LOWEST -> Double.NEGATIVE_INFINITY;
                case HIGHEST -> Double.POSITIVE_INFINITY;
            };
        }
        boolean i32 = t == DType.I32;
        return switch (identity) {
            case ZERO -> 0L;
            case ONE -> 1L;
            case LOWEST -> i32 ? Integer.MIN_VALUE : Long.MIN_VALUE;
            case HIGHEST -> i32 ? Integer.MAX_VALUE : Long.MAX_VALUE;
        };
    }

    /**
     * The op a lowered op named {@code mlirName} computes, with {@code direction} its {@code comparison_direction}
     * (null when it has none), or null when it is not elementwise.
     */
    public static ElementwiseOp lowered(String mlirName, String direction) {
        return BY_LOWERED.get(key(mlirName, direction));
    }

    private static String key(String mlirName, String direction) {
        return direction == null ? mlirName : mlirName + " " + direction;
    }
}
