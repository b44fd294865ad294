package dev.weft.backends.cpu.kernels;

/**
 * Binary elementwise operations on numeric dtypes. Integer {@code DIV} and {@code REM} truncate toward zero and
 * throw {@link ArithmeticException} on a zero divisor; integer {@code POW} is computed by squaring, and a negative
 * exponent gives 0 unless the base is 1 or -1. Floating {@code MAX}/{@code MIN} propagate NaN; floating
 * {@code REM} is C's {@code fmod}.
 */
public enum BinaryOp {
    ADD, SUB, MUL, DIV, POW, MAX, MIN, REM
}
