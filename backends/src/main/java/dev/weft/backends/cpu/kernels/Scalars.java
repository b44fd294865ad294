package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import java.lang.foreign.MemorySegment;

/** Single-element access for code off the hot path (parameters, scalars, predicates). */
public final class Scalars {
    private Scalars() {
    }

    /** Element {@code i} as a double (BOOL as 0 or 1). */
    public static double getDouble(DType t, MemorySegment s, long i) {
        return switch (t) {
            case F32 -> s.getAtIndex(F32, i);
            case F64 -> s.getAtIndex(F64, i);
            case I32 -> s.getAtIndex(I32, i);
            case I64 -> s.getAtIndex(I64, i);
            case BOOL -> s.get(BOOL, i);
        };
    }

    /** Stores {@code v} converted to {@code t} as {@code convert} would (to BOOL is {@code v != 0}). */
    public static void setDouble(DType t, MemorySegment s, long i, double v) {
        switch (t) {
            case F32 -> s.setAtIndex(F32, i, (float) v);
            case F64 -> s.setAtIndex(F64, i, v);
            case I32 -> s.setAtIndex(I32, i, (int) v);
            case I64 -> s.setAtIndex(I64, i, (long) v);
            case BOOL -> s.set(BOOL, i, (byte) (v != 0 ? 1 : 0));
        }
    }

    /**
     * Elements {@code from .. from+len-1} of {@code s} set to {@code v[0 .. len)} converted to {@code t}, by one
     * bulk copy from a Java array (for code that runs before the JIT compiles it, where a segment access per
     * element is an interpreted VarHandle call, tens of times slower than an array store).
     */
    public static void setLongs(DType t, MemorySegment s, long from, long[] v, int len) {
        switch (t) {
            case F32 -> {
                float[] a = new float[len];
                for (int k = 0; k < len; k++) {
                    a[k] = v[k];
                }
                MemorySegment.copy(a, 0, s, F32, from * Float.BYTES, len);
            }
            case F64 -> {
                double[] a = new double[len];
                for (int k = 0; k < len; k++) {
                    a[k] = v[k];
                }
                MemorySegment.copy(a, 0, s, F64, from * Double.BYTES, len);
            }
            case I32 -> {
                int[] a = new int[len];
                for (int k = 0; k < len; k++) {
                    a[k] = (int) v[k];
                }
                MemorySegment.copy(a, 0, s, I32, from * Integer.BYTES, len);
            }
            case I64 -> MemorySegment.copy(v, 0, s, I64, from * Long.BYTES, len);
            case BOOL -> {
                byte[] a = new byte[len];
                for (int k = 0; k < len; k++) {
                    a[k] = (byte) (v[k] != 0 ? 1 : 0);
                }
                MemorySegment.copy(a, 0, s, BOOL, from, len);
            }
        }
    }

    /** Stores the integer {@code v} converted to {@code t}. */
    public static void setLong(DType t, MemorySegment s, long i, long v) {
        switch (t) {
            case F32 -> s.setAtIndex(F32, i, (float) v);
            case F64 -> s.setAtIndex(F64, i, (double) v);
            case I32 -> s.setAtIndex(I32, i, (int) v);
            case I64 -> s.setAtIndex(I64, i, v);
            case BOOL -> s.set(BOOL, i, (byte) (v != 0 ? 1 : 0));
        }
    }
}
