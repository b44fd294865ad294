package dev.weft.backends.cpu.kernels;

import java.lang.foreign.ValueLayout;

/** Unaligned element layouts of the dtypes in a row-major native buffer. */
final class Layouts {
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfByte BOOL = ValueLayout.JAVA_BYTE;

    private Layouts() {
    }
}
