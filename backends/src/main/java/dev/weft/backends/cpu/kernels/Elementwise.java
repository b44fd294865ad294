package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;

/**
 * Elementwise kernels over the first {@code n} elements of row-major buffers. The output may be one of the
 * inputs (each element is read before it is written). One plain indexed loop per operation and dtype, so that
 * the JIT can vectorize it; f32 transcendental functions are computed in double and rounded, f32 sine,
 * cosine and exponential by {@link FloatMathBlock} (equal to {@link FloatMath}).
 */
public final class Elementwise {
    /** The message of the {@link ArithmeticException} of an integer division or remainder by zero. */
    public static final String DIVISION_BY_ZERO = "integer division by zero";

    private Elementwise() {
    }

    /**
     * The kernel of {@code op} on operands of {@code in} (for select, its condition's) with a result of {@code out}:
     * the table binding every {@link ElementwiseOp} to the loops below, for eager and compiled code alike.
     */
    public static ElementwiseKernel kernel(ElementwiseOp op, DType in, DType out) {
        return switch (op.form()) {
            case BINARY -> (a, b, c, o, n) -> binary(op, in, a, b, o, n);
            case UNARY -> (a, b, c, o, n) -> unary(op, in, a, o, n);
            case COMPARISON -> (a, b, c, o, n) -> compare(op, in, a, b, o, n);
            case SELECT -> (a, b, c, o, n) -> select(out, a, b, c, o, n);
            case CONVERT -> (a, b, c, o, n) -> Conversions.convert(in, out, a, o, n);
        };
    }

    /** {@code out[i] = a[i] op b[i]}. */
    public static void binary(ElementwiseOp op, DType t, MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        switch (t) {
            case F32 -> binaryF32(op, a, b, out, n);
            case F64 -> binaryF64(op, a, b, out, n);
            case I32 -> binaryI32(op, a, b, out, n);
            case I64 -> binaryI64(op, a, b, out, n);
            case BOOL -> throw new IllegalArgumentException(op + " is not defined on bool");
        }
    }

    private static void binaryF32(ElementwiseOp op, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (op) {
            case ADD -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, a.getAtIndex(F32, i) + b.getAtIndex(F32, i));
                }
            }
            case SUB -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, a.getAtIndex(F32, i) - b.getAtIndex(F32, i));
                }
            }
            case MUL -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, a.getAtIndex(F32, i) * b.getAtIndex(F32, i));
                }
            }
            case DIV -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, a.getAtIndex(F32, i) / b.getAtIndex(F32, i));
                }
            }
            case POW -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) Math.pow(a.getAtIndex(F32, i), b.getAtIndex(F32, i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, Math.max(a.getAtIndex(F32, i), b.getAtIndex(F32, i)));
                }
            }
            case MIN -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, Math.min(a.getAtIndex(F32, i), b.getAtIndex(F32, i)));
                }
            }
            case REM -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, a.getAtIndex(F32, i) % b.getAtIndex(F32, i));
                }
            }
            case ATAN2 -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) Math.atan2(a.getAtIndex(F32, i), b.getAtIndex(F32, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a binary op");
        }
    }

    private static void binaryF64(ElementwiseOp op, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (op) {
            case ADD -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, a.getAtIndex(F64, i) + b.getAtIndex(F64, i));
                }
            }
            case SUB -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, a.getAtIndex(F64, i) - b.getAtIndex(F64, i));
                }
            }
            case MUL -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, a.getAtIndex(F64, i) * b.getAtIndex(F64, i));
                }
            }
            case DIV -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, a.getAtIndex(F64, i) / b.getAtIndex(F64, i));
                }
            }
            case POW -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.pow(a.getAtIndex(F64, i), b.getAtIndex(F64, i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.max(a.getAtIndex(F64, i), b.getAtIndex(F64, i)));
                }
            }
            case MIN -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.min(a.getAtIndex(F64, i), b.getAtIndex(F64, i)));
                }
            }
            case REM -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, a.getAtIndex(F64, i) % b.getAtIndex(F64, i));
                }
            }
            case ATAN2 -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.atan2(a.getAtIndex(F64, i), b.getAtIndex(F64, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a binary op");
        }
    }

    private static void binaryI32(ElementwiseOp op, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (op) {
            case ADD -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, a.getAtIndex(I32, i) + b.getAtIndex(I32, i));
                }
            }
            case SUB -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, a.getAtIndex(I32, i) - b.getAtIndex(I32, i));
                }
            }
            case MUL -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, a.getAtIndex(I32, i) * b.getAtIndex(I32, i));
                }
            }
            case DIV -> {
                try {
                    for (long i = 0; i < n; i++) {
                        o.setAtIndex(I32, i, a.getAtIndex(I32, i) / b.getAtIndex(I32, i));
                    }
                } catch (ArithmeticException e) {
                    throw new ArithmeticException(DIVISION_BY_ZERO);
                }
            }
            case POW -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, (int) integerPower(a.getAtIndex(I32, i), b.getAtIndex(I32, i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, Math.max(a.getAtIndex(I32, i), b.getAtIndex(I32, i)));
                }
            }
            case MIN -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, Math.min(a.getAtIndex(I32, i), b.getAtIndex(I32, i)));
                }
            }
            case REM -> {
                try {
                    for (long i = 0; i < n; i++) {
                        o.setAtIndex(I32, i, a.getAtIndex(I32, i) % b.getAtIndex(I32, i));
                    }
                } catch (ArithmeticException e) {
                    throw new ArithmeticException(DIVISION_BY_ZERO);
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a binary op");
        }
    }

    private static void binaryI64(ElementwiseOp op, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (op) {
            case ADD -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, a.getAtIndex(I64, i) + b.getAtIndex(I64, i));
                }
            }
            case SUB -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, a.getAtIndex(I64, i) - b.getAtIndex(I64, i));
                }
            }
            case MUL -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, a.getAtIndex(I64, i) * b.getAtIndex(I64, i));
                }
            }
            case DIV -> {
                try {
                    for (long i = 0; i < n; i++) {
                        o.setAtIndex(I64, i, a.getAtIndex(I64, i) / b.getAtIndex(I64, i));
                    }
                } catch (ArithmeticException e) {
                    throw new ArithmeticException(DIVISION_BY_ZERO);
                }
            }
            case POW -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, integerPower(a.getAtIndex(I64, i), b.getAtIndex(I64, i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, Math.max(a.getAtIndex(I64, i), b.getAtIndex(I64, i)));
                }
            }
            case MIN -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, Math.min(a.getAtIndex(I64, i), b.getAtIndex(I64, i)));
                }
            }
            case REM -> {
                try {
                    for (long i = 0; i < n; i++) {
                        o.setAtIndex(I64, i, a.getAtIndex(I64, i) % b.getAtIndex(I64, i));
                    }
                } catch (ArithmeticException e) {
                    throw new ArithmeticException(DIVISION_BY_ZERO);
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a binary op");
        }
    }

    /**
     * {@code base^exp} by squaring, wrapping on overflow; the low 32 bits equal the i32 result for i32 operands.
     * A negative exponent gives 0 unless the base is 1 or -1. Public for generated fusion loops.
     */
    public static long integerPower(long base, long exp) {
        if (exp < 0) {
            return base == 1 ? 1 : base == -1 ? ((exp & 1) == 0 ? 1 : -1) : 0;
        }
        long result = 1;
        while (exp != 0) {
            if ((exp & 1) != 0) {
                result *= base;
            }
            base *= base;
            exp >>= 1;
        }
        return result;
    }

    /** {@code out[i] = op(a[i])}. */
    public static void unary(ElementwiseOp op, DType t, MemorySegment a, MemorySegment out, long n) {
        switch (t) {
            case F32 -> unaryF32(op, a, out, n);
            case F64 -> unaryF64(op, a, out, n);
            case I32 -> unaryI32(op, a, out, n);
            case I64 -> unaryI64(op, a, out, n);
            case BOOL -> throw new IllegalArgumentException(op + " is not defined on bool");
        }
    }

    private static void unaryF32(ElementwiseOp op, MemorySegment a, MemorySegment o, long n) {
        switch (op) {
            case NEG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, -a.getAtIndex(F32, i));
                }
            }
            case ABS -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, Math.abs(a.getAtIndex(F32, i)));
                }
            }
            case EXP, SIN, COS -> floatMath(op, a, o, n);
            case LOG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) Math.log(a.getAtIndex(F32, i)));
                }
            }
            case SQRT -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) Math.sqrt(a.getAtIndex(F32, i)));
                }
            }
            case RSQRT -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) (1.0 / Math.sqrt(a.getAtIndex(F32, i))));
                }
            }
            case TANH -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F32, i, (float) Math.tanh(a.getAtIndex(F32, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a unary op");
        }
    }

    /**
     * f32 {@code exp}, {@code sin} or {@code cos} by {@link FloatMathBlock}, one block at a time copied to a heap
     * array, where C2 vectorizes it.
     */
    private static void floatMath(ElementwiseOp op, MemorySegment a, MemorySegment o, long n) {
        float[] block = new float[(int) Math.min(FloatMathBlock.SIZE, n)];
        FloatMathBlock kernels = FloatMathBlock.local();
        for (long i = 0; i < n; i += FloatMathBlock.SIZE) {
            int length = (int) Math.min(FloatMathBlock.SIZE, n - i);
            MemorySegment.copy(a, F32, i * Float.BYTES, block, 0, length);
            switch (op) {
                case EXP -> kernels.exp(block, block, length);
                case SIN -> kernels.sin(block, block, length);
                default -> kernels.cos(block, block, length);
            }
            MemorySegment.copy(block, 0, o, F32, i * Float.BYTES, length);
        }
    }

    private static void unaryF64(ElementwiseOp op, MemorySegment a, MemorySegment o, long n) {
        switch (op) {
            case NEG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, -a.getAtIndex(F64, i));
                }
            }
            case ABS -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.abs(a.getAtIndex(F64, i)));
                }
            }
            case EXP -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.exp(a.getAtIndex(F64, i)));
                }
            }
            case LOG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.log(a.getAtIndex(F64, i)));
                }
            }
            case SQRT -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.sqrt(a.getAtIndex(F64, i)));
                }
            }
            case RSQRT -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, 1.0 / Math.sqrt(a.getAtIndex(F64, i)));
                }
            }
            case TANH -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.tanh(a.getAtIndex(F64, i)));
                }
            }
            case SIN -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.sin(a.getAtIndex(F64, i)));
                }
            }
            case COS -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(F64, i, Math.cos(a.getAtIndex(F64, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not a unary op");
        }
    }

    private static void unaryI32(ElementwiseOp op, MemorySegment a, MemorySegment o, long n) {
        switch (op) {
            case NEG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, -a.getAtIndex(I32, i));
                }
            }
            case ABS -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I32, i, Math.abs(a.getAtIndex(I32, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not defined on i32");
        }
    }

    private static void unaryI64(ElementwiseOp op, MemorySegment a, MemorySegment o, long n) {
        switch (op) {
            case NEG -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, -a.getAtIndex(I64, i));
                }
            }
            case ABS -> {
                for (long i = 0; i < n; i++) {
                    o.setAtIndex(I64, i, Math.abs(a.getAtIndex(I64, i)));
                }
            }
            default -> throw new IllegalArgumentException(op + " is not defined on i64");
        }
    }

    /** {@code out[i] = a[i] cmp b[i]} as BOOL bytes; GT and GE swap the operands, NE negates EQ. */
    public static void compare(ElementwiseOp cmp, DType t, MemorySegment a, MemorySegment b, MemorySegment out,
                               long n) {
        switch (cmp) {
            case EQ -> equal(t, a, b, out, n, 0);
            case NE -> equal(t, a, b, out, n, 1);
            case LT -> less(t, a, b, out, n);
            case GT -> less(t, b, a, out, n);
            case LE -> lessOrEqual(t, a, b, out, n);
            case GE -> lessOrEqual(t, b, a, out, n);
            default -> throw new IllegalArgumentException(cmp + " is not a comparison");
        }
    }

    /** Equality, xor-ed with {@code flip} (1 turns it into inequality, which is true for NaN). */
    private static void equal(DType t, MemorySegment a, MemorySegment b, MemorySegment o, long n, int flip) {
        switch (t) {
            case F32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) ((a.getAtIndex(F32, i) == b.getAtIndex(F32, i) ? 1 : 0) ^ flip));
                }
            }
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) ((a.getAtIndex(F64, i) == b.getAtIndex(F64, i) ? 1 : 0) ^ flip));
                }
            }
            case I32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) ((a.getAtIndex(I32, i) == b.getAtIndex(I32, i) ? 1 : 0) ^ flip));
                }
            }
            case I64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) ((a.getAtIndex(I64, i) == b.getAtIndex(I64, i) ? 1 : 0) ^ flip));
                }
            }
            case BOOL -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) ((a.get(BOOL, i) == b.get(BOOL, i) ? 1 : 0) ^ flip));
                }
            }
        }
    }

    private static void less(DType t, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (t) {
            case F32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(F32, i) < b.getAtIndex(F32, i) ? 1 : 0));
                }
            }
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(F64, i) < b.getAtIndex(F64, i) ? 1 : 0));
                }
            }
            case I32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(I32, i) < b.getAtIndex(I32, i) ? 1 : 0));
                }
            }
            case I64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(I64, i) < b.getAtIndex(I64, i) ? 1 : 0));
                }
            }
            case BOOL -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.get(BOOL, i) < b.get(BOOL, i) ? 1 : 0));
                }
            }
        }
    }

    private static void lessOrEqual(DType t, MemorySegment a, MemorySegment b, MemorySegment o, long n) {
        switch (t) {
            case F32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(F32, i) <= b.getAtIndex(F32, i) ? 1 : 0));
                }
            }
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(F64, i) <= b.getAtIndex(F64, i) ? 1 : 0));
                }
            }
            case I32 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(I32, i) <= b.getAtIndex(I32, i) ? 1 : 0));
                }
            }
            case I64 -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.getAtIndex(I64, i) <= b.getAtIndex(I64, i) ? 1 : 0));
                }
            }
            case BOOL -> {
                for (long i = 0; i < n; i++) {
                    o.set(BOOL, i, (byte) (a.get(BOOL, i) <= b.get(BOOL, i) ? 1 : 0));
                }
            }
        }
    }

    /** {@code out[i] = cond[i] != 0 ? a[i] : b[i]} with {@code cond} BOOL and the others of {@code t}. */
    public static void select(DType t, MemorySegment cond, MemorySegment a, MemorySegment b, MemorySegment out,
                              long n) {
        switch (t.byteSize()) {
            case 8 -> {
                for (long i = 0; i < n; i++) {
                    out.setAtIndex(I64, i, cond.get(BOOL, i) != 0 ? a.getAtIndex(I64, i) : b.getAtIndex(I64, i));
                }
            }
            case 4 -> {
                for (long i = 0; i < n; i++) {
                    out.setAtIndex(I32, i, cond.get(BOOL, i) != 0 ? a.getAtIndex(I32, i) : b.getAtIndex(I32, i));
                }
            }
            default -> {
                for (long i = 0; i < n; i++) {
                    out.set(BOOL, i, cond.get(BOOL, i) != 0 ? a.get(BOOL, i) : b.get(BOOL, i));
                }
            }
        }
    }
}
