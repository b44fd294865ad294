package dev.weft.backends.comm;

import dev.weft.DType;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * A reduction operator of the collectives: one of the built-ins {@link #SUM}, {@link #PROD}, {@link #MIN},
 * {@link #MAX}, or a user-supplied {@link #custom(String, ReduceFunction) custom} one.
 *
 * <p>Contributions are combined in ascending rank order, {@code ((x0 ⊕ x1) ⊕ x2) ⊕ ...}, so reductions are
 * deterministic: a {@code SUM} over {@code F32} accumulates in {@code float} in rank order 0, 1, 2, ... and gives
 * bit-identical results on every run and on every rank. Integer {@code SUM} and {@code PROD} wrap around.
 */
public sealed interface RuntimeReduceOp extends ReduceFunction permits RuntimeReduceOp.Builtin, RuntimeReduceOp.Custom {
    RuntimeReduceOp SUM = Builtin.SUM;
    RuntimeReduceOp PROD = Builtin.PROD;
    RuntimeReduceOp MIN = Builtin.MIN;
    RuntimeReduceOp MAX = Builtin.MAX;

    /** The operator's name: {@code SUM PROD MIN MAX}, or the custom name. Peers must agree on it. */
    String name();

    /** Whether this operator is defined on {@code dtype}. */
    boolean supports(DType dtype);

    /** A user-supplied operator: {@code function} must be associative (see {@link ReduceFunction}). */
    static RuntimeReduceOp custom(String name, ReduceFunction function) {
        return new Custom(name, function);
    }

    /**
     * The built-in operators, defined on {@code F32 F64 I32 I64} (not on {@code BOOL}); {@code MIN} and
     * {@code MAX} follow {@link Math#min} and {@link Math#max} (NaN wins, -0.0 is below 0.0).
     */
    enum Builtin implements RuntimeReduceOp {
        SUM, PROD, MIN, MAX;

        @Override
        public boolean supports(DType dtype) {
            return dtype != DType.BOOL;
        }

        @Override
        public void combine(MemorySegment inout, MemorySegment in, long count, DType dtype) {
            switch (dtype) {
                case F32 -> {
                    ValueLayout.OfFloat l = ValueLayout.JAVA_FLOAT_UNALIGNED;
                    for (long i = 0; i < count; i++) {
                        inout.setAtIndex(l, i, apply(in.getAtIndex(l, i), inout.getAtIndex(l, i)));
                    }
                }
                case F64 -> {
                    ValueLayout.OfDouble l = ValueLayout.JAVA_DOUBLE_UNALIGNED;
                    for (long i = 0; i < count; i++) {
                        inout.setAtIndex(l, i, apply(in.getAtIndex(l, i), inout.getAtIndex(l, i)));
                    }
                }
                case I32 -> {
                    ValueLayout.OfInt l = ValueLayout.JAVA_INT_UNALIGNED;
                    for (long i = 0; i < count; i++) {
                        inout.setAtIndex(l, i, apply(in.getAtIndex(l, i), inout.getAtIndex(l, i)));
                    }
                }
                case I64 -> {
                    ValueLayout.OfLong l = ValueLayout.JAVA_LONG_UNALIGNED;
                    for (long i = 0; i < count; i++) {
                        inout.setAtIndex(l, i, apply(in.getAtIndex(l, i), inout.getAtIndex(l, i)));
                    }
                }
                case BOOL -> throw new IllegalArgumentException(this + " is not defined on bool");
            }
        }

        private float apply(float a, float b) {
            return switch (this) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
            };
        }

        private double apply(double a, double b) {
            return switch (this) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
            };
        }

        private int apply(int a, int b) {
            return switch (this) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
            };
        }

        private long apply(long a, long b) {
            return switch (this) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
            };
        }
    }

    /** A user-supplied operator, defined on every dtype; peers match it by name. */
    record Custom(String name, ReduceFunction function) implements RuntimeReduceOp {
        public Custom {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(function, "function");
        }

        @Override
        public boolean supports(DType dtype) {
            return true;
        }

        @Override
        public void combine(MemorySegment inout, MemorySegment in, long count, DType dtype) {
            function.combine(inout, in, count, dtype);
        }
    }
}
