package dev.weft.backends.cpu.kernels;

/** Unary elementwise operations; all but {@code NEG} and {@code ABS} are defined on floating dtypes only. */
public enum UnaryOp {
    NEG, ABS, EXP, LOG, SQRT, RSQRT, TANH, SIN, COS
}
