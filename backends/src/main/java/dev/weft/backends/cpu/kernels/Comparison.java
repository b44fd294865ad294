package dev.weft.backends.cpu.kernels;

/** Elementwise comparisons with IEEE semantics: every comparison with NaN is false except {@code NE}. */
public enum Comparison {
    EQ, NE, LT, LE, GT, GE
}
