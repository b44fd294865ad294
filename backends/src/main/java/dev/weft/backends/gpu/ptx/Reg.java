package dev.weft.backends.gpu.ptx;

import dev.weft.DType;

/**
 * PTX register classes the generator allocates. A tensor element lives in the class of its dtype
 * ({@link #of(DType)}): BOOL is a predicate in registers and one byte (0 or 1) in memory, moved through a 16-bit
 * register ({@link #U16}) because PTX has no 8-bit registers.
 */
public enum Reg {
    PRED("pred", "%p"),
    U16("b16", "%h"),
    S32("b32", "%r"),
    S64("b64", "%rd"),
    F32("f32", "%f"),
    F64("f64", "%fd");

    private final String declType;
    private final String prefix;

    Reg(String declType, String prefix) {
        this.declType = declType;
        this.prefix = prefix;
    }

    /** The {@code .reg} type in declarations ({@code .f32}, {@code .b64}, ...), without the dot. */
    public String declType() {
        return declType;
    }

    /** The register name prefix ({@code %f}, {@code %rd}, ...). */
    public String prefix() {
        return prefix;
    }

    /** The class holding one element of {@code t}. */
    public static Reg of(DType t) {
        return switch (t) {
            case F32 -> F32;
            case F64 -> F64;
            case I32 -> S32;
            case I64 -> S64;
            case BOOL -> PRED;
        };
    }

    /** The PTX instruction type suffix for arithmetic on {@code t} ({@code f32}, {@code s64}, ...); not for BOOL. */
    public static String arith(DType t) {
        return switch (t) {
            case F32 -> "f32";
            case F64 -> "f64";
            case I32 -> "s32";
            case I64 -> "s64";
            case BOOL -> throw new IllegalArgumentException("no arithmetic on bool");
        };
    }
}
