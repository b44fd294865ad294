package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;

/**
 * The fold of one output element's contiguous run of reduced elements, fed in consecutive pieces: the same
 * operations in the same order as {@link Reductions#accumulate} applies to a whole contiguous run (floating
 * elements in {@link Reductions#LANES} lanes by their position in the run, f32 sums and products in double; integer
 * ones in order from the run's first element; the output's initial value combined last), so a run folded in pieces
 * gives bit for bit what {@code accumulate} gives. A run of one element gives what {@code accumulate}'s elementwise
 * combination gives (a single f32 add or multiply rounded once from double equals the f32 operation).
 */
public final class RunFold {
    private final ElementwiseOp r;
    private final DType t;
    private boolean started;
    /** Floating runs: the lanes, and the position in the run of the next element. */
    private final double[] lanes;
    private long position;
    private long integer;

    /** A fold by {@code r} of {@code t} values (f32, f64, i32 or i64). */
    public RunFold(ElementwiseOp r, DType t) {
        if (t == DType.BOOL) {
            throw new IllegalArgumentException("reduction is not defined on bool");
        }
        this.r = r;
        this.t = t;
        this.lanes = t.isFloating() ? Reductions.startLanes(r) : null;
    }

    /** Folds elements {@code [from, from + n)} of {@code in}, which follow the run's elements folded so far. */
    public void add(MemorySegment in, long from, long n) {
        if (n <= 0) {
            return;
        }
        if (t.isFloating()) {
            started = true;
            Reductions.foldLanes(r, t, in, from, from + n, position, lanes);
            position += n;
            return;
        }
        if (!started) {
            started = true;
            integer = t == DType.I32 ? in.getAtIndex(I32, from) : in.getAtIndex(I64, from);
            from++;
            n--;
        }
        integer = Reductions.foldIntegerRun(r, t, in, from, from + n, integer);
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
            Reductions.combineFloating(r, t, out, k, Reductions.combineLanes(r, lanes));
            Reductions.resetLanes(r, lanes);
            position = 0;
        } else {
            Reductions.combineInteger(r, t, out, k, integer);
        }
        started = false;
    }
}
