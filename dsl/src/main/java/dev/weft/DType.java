package dev.weft;

import java.lang.foreign.ValueLayout;

/**
 * Element types of a {@link Tensor}.
 *
 * <p>Weft does not promote types implicitly: binary operations require equal dtypes (like StableHLO and
 * JAX's strict promotion mode) and raise {@link DTypeException} otherwise; use {@link Tensor#cast(DType)}.
 * Java {@code double} operands of the scalar overloads are weakly typed and take the tensor's dtype.
 * {@code BOOL} is stored as one byte holding 0 or 1.
 */
public enum DType {
    F32(4, "f32", ValueLayout.JAVA_FLOAT),
    F64(8, "f64", ValueLayout.JAVA_DOUBLE),
    I32(4, "i32", ValueLayout.JAVA_INT),
    I64(8, "i64", ValueLayout.JAVA_LONG),
    BOOL(1, "i1", ValueLayout.JAVA_BYTE);

    private final int byteSize;
    private final String mlirName;
    private final ValueLayout layout;

    DType(int byteSize, String mlirName, ValueLayout layout) {
        this.byteSize = byteSize;
        this.mlirName = mlirName;
        this.layout = layout;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** The element type as spelled in MLIR ({@code f32}, {@code i1}, ...). */
    public String mlirName() {
        return mlirName;
    }

    /** The unaligned Java layout of one element in a native buffer. */
    public ValueLayout layout() {
        return layout.withByteAlignment(1);
    }

    public boolean isFloating() {
        return this == F32 || this == F64;
    }

    public boolean isInteger() {
        return this == I32 || this == I64;
    }

    /** Lower-case name used in specs such as {@code f32[64,64]} ({@code bool} for BOOL). */
    public String specName() {
        return this == BOOL ? "bool" : mlirName;
    }

    /** Parses a spec name ({@code f32 f64 i32 i64 bool}). */
    public static DType fromSpecName(String name) {
        for (DType t : values()) {
            if (t.specName().equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown dtype '" + name + "' (expected f32, f64, i32, i64 or bool)");
    }
}
