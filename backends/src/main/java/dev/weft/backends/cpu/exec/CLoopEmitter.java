package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Optional;

/**
 * A {@link FusedLoopSpec} as a C function ({@link NativeLoops} compiles it), computing every op as the JVM's
 * loop does, bit for bit: IEEE float arithmetic with no contraction into fused multiply-adds
 * ({@code -ffp-contract=off}), integers wrapping ({@code -fwrapv}), {@code Math.max}/{@code min}'s NaN and signed
 * zero rules, Java's saturating float-to-integer casts, f32 square roots in double then rounded, f32 {@code exp} as
 * {@code FloatMath.exp} computes it (the same double operations; outside its reduced range the result is 0, infinity
 * or NaN, as the JVM's {@code (float) Math.exp} rounds to). Ops whose Java result C cannot promise (integer division
 * and remainder, which throw on zero; {@code pow}, f64 {@code exp} and the other transcendentals, whose Java and libm
 * results may differ in the last place) have no C form: such a spec stays on the JVM.
 *
 * <p>The function is {@code void name(const int64_t *a, const int64_t *s, int64_t rows, int64_t from, int64_t to)}:
 * {@code a} holds the address of each input, then of each result, with its offset added (a rank-0 input's is its
 * one element); for each of {@code rows} rows it runs elements {@code [from, to)}, then advances every address by
 * its entry of {@code s} (bytes). Element {@code i} of every input is read before any result's element {@code i}
 * is written, so a result may be an input. The inner loop is marked free of dependences between elements
 * ({@code WEFT_INDEPENDENT}): the compiler's own alias checks give up past about ten pairs of pointers, so a loop with
 * many inputs and results ran one element at a time (the MLP's first relu, 2 inputs and 4 results: 500 against
 * 40 us a call), and a result that is an input is the same element, so vector code is still right.
 */
final class CLoopEmitter {
    /** The helpers every function may call; part of each library's source, hence of its cache key. */
    static final String PRELUDE = """
            #include <stdint.h>
            #include <string.h>
            #include <math.h>
            #if defined(__clang__)
            #define WEFT_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
            #else
            #define WEFT_INDEPENDENT _Pragma("GCC ivdep")
            #endif
            static inline float wmaxf(float a, float b) {
                return (a > b || a != a) ? a : (b > a || b != b) ? b : (signbit(a) ? b : a); }
            static inline float wminf(float a, float b) {
                return (a < b || a != a) ? a : (b < a || b != b) ? b : (signbit(a) ? a : b); }
            static inline double wmax(double a, double b) {
                return (a > b || a != a) ? a : (b > a || b != b) ? b : (signbit(a) ? b : a); }
            static inline double wmin(double a, double b) {
                return (a < b || a != a) ? a : (b < a || b != b) ? b : (signbit(a) ? a : b); }
            static inline int32_t wd2i(double x) {
                return x != x ? 0 : x >= 2147483648.0 ? INT32_MAX : x <= -2147483649.0 ? INT32_MIN : (int32_t) x; }
            static inline int64_t wd2l(double x) {
                return x != x ? 0 : x >= 9223372036854775808.0 ? INT64_MAX
                        : x < -9223372036854775808.0 ? INT64_MIN : (int64_t) x; }
            static inline float wexpf(float x) {
                const double d = x;
                const int within = fabs(d) <= 104.0;
                const double e = within ? d : 0.0;
                const double k = (e * 0x1.71547652b82fep0 + 0x1.8p52) - 0x1.8p52;
                const double r = fma(-k, 0x1.abc9e3b39803fp-56, fma(-k, 0x1.62e42fefa39efp-1, e));
                const double p = 1 + r * (1 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120
                        + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880)))))))));
                const int64_t bits = ((int64_t) k + 1023) << 52;
                double scale;
                memcpy(&scale, &bits, sizeof scale);
                const float y = (float) (p * scale), nan = x + x;
                uint32_t yb, nb;
                memcpy(&yb, &y, sizeof yb);
                memcpy(&nb, &nan, sizeof nb);
                /* outside the range: 0, infinity or NaN, picked by masks (conditional float code stays scalar) */
                const uint32_t in = -(uint32_t) within, nans = -(uint32_t) (d != d);
                const uint32_t beyond = -(uint32_t) (d > 0) & 0x7f800000u;
                const uint32_t bits32 = (yb & in) | (~in & ((nb & nans) | (~nans & beyond)));
                float out;
                memcpy(&out, &bits32, sizeof out);
                return out; }
            """;

    private final FusedLoopSpec spec;
    private final StringBuilder c = new StringBuilder();

    private CLoopEmitter(FusedLoopSpec spec) {
        this.spec = spec;
    }

    /** The C function {@code name} computing {@code spec}, or empty when an op of it has no C form. */
    static Optional<String> function(FusedLoopSpec spec, String name) {
        for (FusedLoopSpec.Node n : spec.nodes()) {
            if (n instanceof FusedLoopSpec.Apply a && !hasC(a)) {
                return Optional.empty();
            }
        }
        return Optional.of(new CLoopEmitter(spec).emit(name));
    }

    /** Whether {@code a} has a C form that equals the JVM's result bit for bit. */
    static boolean hasC(FusedLoopSpec.Apply a) {
        boolean floating = a.operand().isFloating();
        return switch (a.op()) {
            case ADD, SUB, MUL, MAX, MIN, NEG, ABS, LT, LE, GT, GE, EQ, NE, SELECT, CONVERT -> true;
            case DIV, REM, SQRT, RSQRT -> floating;
            case EXP -> a.operand() == DType.F32;
            case POW, LOG, TANH, ATAN2, SIN, COS -> false;
        };
    }

    private String emit(String name) {
        List<FusedLoopSpec.Node> nodes = spec.nodes();
        int inputs = inputCount(spec);
        c.append("void ").append(name).append("(const int64_t *a, const int64_t *s, int64_t rows, int64_t from, ")
                .append("int64_t to) {\n");
        boolean[] element = new boolean[inputs];
        boolean[] scalar = new boolean[inputs];
        DType[] inputType = new DType[inputs];
        for (FusedLoopSpec.Node n : nodes) {
            switch (n) {
                case FusedLoopSpec.Element e -> {
                    element[e.input()] = true;
                    inputType[e.input()] = e.dtype();
                }
                case FusedLoopSpec.Scalar s -> {
                    scalar[s.input()] = true;
                    inputType[s.input()] = s.dtype();
                }
                case FusedLoopSpec.Apply ignored -> {
                }
            }
        }
        for (int k = 0; k < inputs; k++) {
            if (element[k]) {
                c.append("    const ").append(storage(inputType[k])).append(" *p").append(k).append(" = (const ")
                        .append(storage(inputType[k])).append(" *) a[").append(k).append("];\n");
            }
            if (scalar[k]) {
                c.append("    const ").append(value(inputType[k])).append(" c").append(k).append(" = *(const ")
                        .append(storage(inputType[k])).append(" *) a[").append(k).append("];\n");
            }
        }
        List<Integer> results = spec.results();
        for (int r = 0; r < results.size(); r++) {
            String t = storage(nodes.get(results.get(r)).dtype());
            c.append("    ").append(t).append(" *q").append(r).append(" = (").append(t).append(" *) a[")
                    .append(inputs + r).append("];\n");
        }
        c.append("    for (int64_t r = 0; r < rows; r++) {\n        WEFT_INDEPENDENT\n")
                .append("        for (int64_t i = from; i < to; i++) {\n");
        for (int k = 0; k < nodes.size(); k++) {
            FusedLoopSpec.Node n = nodes.get(k);
            c.append("            const ").append(value(n.dtype())).append(" v").append(k).append(" = ");
            switch (n) {
                case FusedLoopSpec.Element e -> c.append("p").append(e.input()).append("[i]");
                case FusedLoopSpec.Scalar s -> c.append("c").append(s.input());
                case FusedLoopSpec.Apply a -> apply(a);
            }
            c.append(";\n");
        }
        for (int r = 0; r < results.size(); r++) {
            c.append("            q").append(r).append("[i] = (").append(storage(nodes.get(results.get(r)).dtype()))
                    .append(") v").append(results.get(r)).append(";\n");
        }
        c.append("        }\n");
        for (int k = 0; k < inputs; k++) {
            if (element[k]) {
                advance("p" + k, "const " + storage(inputType[k]), k);
            }
        }
        for (int r = 0; r < results.size(); r++) {
            advance("q" + r, storage(nodes.get(results.get(r)).dtype()), inputs + r);
        }
        return c.append("    }\n}\n").toString();
    }

    private void advance(String pointer, String type, int k) {
        c.append("        ").append(pointer).append(" = (").append(type).append(" *) ((const char *) ").append(pointer)
                .append(" + s[").append(k).append("]);\n");
    }

    /** Inputs the spec reads: one past the highest input index of its elements and scalars. */
    static int inputCount(FusedLoopSpec spec) {
        int inputs = 0;
        for (FusedLoopSpec.Node n : spec.nodes()) {
            switch (n) {
                case FusedLoopSpec.Element e -> inputs = Math.max(inputs, e.input() + 1);
                case FusedLoopSpec.Scalar s -> inputs = Math.max(inputs, s.input() + 1);
                case FusedLoopSpec.Apply ignored -> {
                }
            }
        }
        return inputs;
    }

    private String arg(FusedLoopSpec.Apply a, int i) {
        return "v" + a.args().get(i);
    }

    private void apply(FusedLoopSpec.Apply a) {
        DType t = a.operand();
        boolean f32 = t == DType.F32;
        switch (a.op()) {
            case ADD -> binary(a, "+");
            case SUB -> binary(a, "-");
            case MUL -> binary(a, "*");
            case DIV -> binary(a, "/");
            case REM -> call(a, f32 ? "fmodf" : "fmod");
            case MAX -> extreme(a, f32 ? "wmaxf" : "wmax", ">=");
            case MIN -> extreme(a, f32 ? "wminf" : "wmin", "<=");
            case NEG -> c.append("(").append(value(t)).append(") -").append(arg(a, 0));
            case ABS -> {
                if (t.isFloating()) {
                    call(a, f32 ? "fabsf" : "fabs");
                } else {
                    c.append("(").append(value(t)).append(") (").append(arg(a, 0)).append(" < 0 ? -")
                            .append(arg(a, 0)).append(" : ").append(arg(a, 0)).append(")");
                }
            }
            case SQRT -> c.append(f32 ? "(float) sqrt((double) " + arg(a, 0) + ")" : "sqrt(" + arg(a, 0) + ")");
            case RSQRT -> c.append(f32 ? "(float) (1.0 / sqrt((double) " + arg(a, 0) + "))"
                    : "1.0 / sqrt(" + arg(a, 0) + ")");
            case LT -> compare(a, "<");
            case LE -> compare(a, "<=");
            case GT -> compare(a, ">");
            case GE -> compare(a, ">=");
            case EQ -> compare(a, "==");
            case NE -> compare(a, "!=");
            case SELECT -> c.append("(").append(arg(a, 0)).append(" != 0 ? ").append(arg(a, 1)).append(" : ")
                    .append(arg(a, 2)).append(")");
            case CONVERT -> convert(a);
            case EXP -> call(a, "wexpf");
            case POW, LOG, TANH, ATAN2, SIN, COS -> throw new IllegalArgumentException(a.op() + " has no C form");
        }
    }

    /**
     * Maximum or minimum: floats through {@code function} (the prelude's, with {@code Math.max}'s NaN and signed-zero
     * rules), integers as {@code Math.max(a, b)} is written: {@code a >= b ? a : b}.
     */
    private void extreme(FusedLoopSpec.Apply a, String function, String keepFirst) {
        if (a.operand().isFloating()) {
            call(a, function);
        } else {
            c.append("(").append(arg(a, 0)).append(" ").append(keepFirst).append(" ").append(arg(a, 1)).append(" ? ")
                    .append(arg(a, 0)).append(" : ").append(arg(a, 1)).append(")");
        }
    }

    /** In the operand's type: a sum of two i32s wraps ({@code -fwrapv}) and is cast back from int. */
    private void binary(FusedLoopSpec.Apply a, String operator) {
        c.append("(").append(value(a.operand())).append(") (").append(arg(a, 0)).append(" ").append(operator)
                .append(" ").append(arg(a, 1)).append(")");
    }

    private void call(FusedLoopSpec.Apply a, String function) {
        c.append(function).append("(").append(arg(a, 0));
        for (int i = 1; i < a.args().size(); i++) {
            c.append(", ").append(arg(a, i));
        }
        c.append(")");
    }

    /** 1 or 0; a comparison with NaN is false but {@code !=}, as {@code fcmpg}/{@code fcmpl} make it. */
    private void compare(FusedLoopSpec.Apply a, String operator) {
        c.append("(int32_t) (").append(arg(a, 0)).append(" ").append(operator).append(" ").append(arg(a, 1))
                .append(")");
    }

    /**
     * Java's casts: float to integer saturates with NaN to 0; to BOOL from another dtype is {@code != 0} (NaN is
     * true).
     */
    private void convert(FusedLoopSpec.Apply a) {
        DType from = a.operand();
        DType to = a.dtype();
        String x = arg(a, 0);
        if (to == DType.BOOL && from != DType.BOOL) {
            c.append("(int32_t) (").append(x).append(" != 0)");
        } else if (from.isFloating() && (to == DType.I32 || to == DType.I64)) {
            c.append(to == DType.I32 ? "wd2i" : "wd2l").append("((double) ").append(x).append(")");
        } else {
            c.append("(").append(value(to)).append(") ").append(x);
        }
    }

    /** The C type an element is stored as (BOOL: one byte). */
    static String storage(DType t) {
        return t == DType.BOOL ? "int8_t" : value(t);
    }

    /** The C type a value is computed in, as the JVM's (BOOL: an int of 0 or 1). */
    static String value(DType t) {
        return switch (t) {
            case F32 -> "float";
            case F64 -> "double";
            case I32, BOOL -> "int32_t";
            case I64 -> "int64_t";
        };
    }
}
