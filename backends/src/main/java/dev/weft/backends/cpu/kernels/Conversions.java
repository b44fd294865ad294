package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import java.lang.foreign.MemorySegment;

/**
 * Dtype conversion ({@code convert}) with Java cast semantics: float to integer truncates toward zero and
 * saturates at the target's range (NaN becomes 0); i64 to i32 keeps the low 32 bits; BOOL reads as 0 or 1;
 * conversion to BOOL is {@code != 0} (so NaN is true).
 */
public final class Conversions {
    private Conversions() {
    }

    /**
     * {@code out[i] = (to) a[i]} for the first {@code n} elements; {@code out} may be {@code a} when both dtypes
     * have one byte size.
     */
    public static void convert(DType from, DType to, MemorySegment a, MemorySegment out, long n) {
        switch (to) {
            case F32 -> {
                switch (from) {
                    case F64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F32, i, (float) a.getAtIndex(F64, i));
                        }
                    }
                    case I32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F32, i, (float) a.getAtIndex(I32, i));
                        }
                    }
                    case I64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F32, i, (float) a.getAtIndex(I64, i));
                        }
                    }
                    case BOOL -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F32, i, (float) a.get(BOOL, i));
                        }
                    }
                    case F32 -> MemorySegment.copy(a, 0, out, 0, n * from.byteSize());
                }
            }
            case F64 -> {
                switch (from) {
                    case F32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F64, i, (double) a.getAtIndex(F32, i));
                        }
                    }
                    case I32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F64, i, (double) a.getAtIndex(I32, i));
                        }
                    }
                    case I64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F64, i, (double) a.getAtIndex(I64, i));
                        }
                    }
                    case BOOL -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(F64, i, (double) a.get(BOOL, i));
                        }
                    }
                    case F64 -> MemorySegment.copy(a, 0, out, 0, n * from.byteSize());
                }
            }
            case I32 -> {
                switch (from) {
                    case F32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I32, i, (int) a.getAtIndex(F32, i));
                        }
                    }
                    case F64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I32, i, (int) a.getAtIndex(F64, i));
                        }
                    }
                    case I64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I32, i, (int) a.getAtIndex(I64, i));
                        }
                    }
                    case BOOL -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I32, i, (int) a.get(BOOL, i));
                        }
                    }
                    case I32 -> MemorySegment.copy(a, 0, out, 0, n * from.byteSize());
                }
            }
            case I64 -> {
                switch (from) {
                    case F32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I64, i, (long) a.getAtIndex(F32, i));
                        }
                    }
                    case F64 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I64, i, (long) a.getAtIndex(F64, i));
                        }
                    }
                    case I32 -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I64, i, (long) a.getAtIndex(I32, i));
                        }
                    }
                    case BOOL -> {
                        for (long i = 0; i < n; i++) {
                            out.setAtIndex(I64, i, (long) a.get(BOOL, i));
                        }
                    }
                    case I64 -> MemorySegment.copy(a, 0, out, 0, n * from.byteSize());
                }
            }
            case BOOL -> {
                switch (from) {
                    case F32 -> {
                        for (long i = 0; i < n; i++) {
                            out.set(BOOL, i, (byte) (a.getAtIndex(F32, i) != 0 ? 1 : 0));
                        }
                    }
                    case F64 -> {
                        for (long i = 0; i < n; i++) {
                            out.set(BOOL, i, (byte) (a.getAtIndex(F64, i) != 0 ? 1 : 0));
                        }
                    }
                    case I32 -> {
                        for (long i = 0; i < n; i++) {
                            out.set(BOOL, i, (byte) (a.getAtIndex(I32, i) != 0 ? 1 : 0));
                        }
                    }
                    case I64 -> {
                        for (long i = 0; i < n; i++) {
                            out.set(BOOL, i, (byte) (a.getAtIndex(I64, i) != 0 ? 1 : 0));
                        }
                    }
                    case BOOL -> MemorySegment.copy(a, 0, out, 0, n * from.byteSize());
                }
            }
        }
    }
}
