package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;

/**
 * The fold of one output element's contiguous run of reduced elements, fed in consecutive pieces: the same
 * operations in the same order as {@link Reductions#accumulate} applies to a whole contiguous run (the run's first
 * element starts the fold, f32 sums and products accumulate in double, the output's initial value is combined
 * last), so a run folded in pieces gives bit for bit what {@code accumulate} gives. A run of one element gives
 * what {@code accumulate}'s elementwise combination gives (a single f32 add or multiply rounded once from double
 * equals the f32 operation).
 */
public final class RunFold {
    private final ElementwiseOp r;
    private final DType t;
    private boolean started;
    private double floating;
    private long integer;

    /** A fold by {@code r} of {@code t} values (f32, f64, i32 or i64). */
    public RunFold(ElementwiseOp r, DType t) {
        if (t == DType.BOOL) {
            throw new IllegalArgumentException("reduction is not defined on bool");
        }
        this.r = r;
        this.t = t;
    }

    /** Folds elements {@code [from, from + n)} of {@code in}, which follow the run's elements folded so far. */
    public void add(MemorySegment in, long from, long n) {
        if (n <= 0) {
            return;
        }
        if (!started) {
            started = true;
            switch (t) {
                case F32 -> floating = in.getAtIndex(F32, from);
                case F64 -> floating = in.getAtIndex(F64, from);
                case I32 -> integer = in.getAtIndex(I32, from);
                default -> integer = in.getAtIndex(I64, from);
            }
            from++;
            n--;
        }
        if (t.isFloating()) {
            floating = Reductions.foldFloatingRun(r, t, in, from, from + n, floating);
        } else {
            integer = Reductions.foldIntegerRun(r, t, in, from, from + n, integer);
        }
    }

    /**
     * Combines the run into element {@code k} of {@code out}, which holds its initial value (left as it is when the
     * run was empty), and starts a new run.
     */
    public void finish(MemorySegment out, long k) {
        if (!started) {
            return;
        }
        if (t.isFloating()) {
            Reductions.combineFloating(r, t, out, k, floating);
        } else {
            Reductions.combineInteger(r, t, out, k, integer);
        }
        started = false;
    }
}
