package dev.weft.backends.cpu.exec;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The one downcall every native fused loop is called through ({@link NativeFusedLoop}), linked once and bound to each
 * loop's symbol, and every native row kernel ({@link NativeRowKernels}). Linking it makes classes, ~0.1 s of a fresh
 * JVM's first compiled call, so the CPU target links it (and finds the C compiler) on a thread of its own when it is
 * first used ({@code Preload}, with {@link #link}), while the first program is traced and lowered; the first native
 * loop finds it ready or waits for that thread's class initialisation, as {@code Libc} does for the C library's
 * functions.
 */
public final class NativeLoopLinking {
    /** {@code void f(const int64_t *a, const int64_t *s, int64_t rows, int64_t from, int64_t to)}, unbound. */
    static final MethodHandle UNBOUND = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(
            ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG), Linker.Option.critical(true));

    private NativeLoopLinking() {
    }

    /** Initialises this class, which links the downcall, and finds the C compiler (for {@code Preload}). */
    public static void link() {
        NativeLoops.warmUp();
    }
}
