package dev.weft.spi;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The C library functions {@link NativeMemory}'s buffers come from, as FFM downcalls: {@code malloc}/{@code free}
 * everywhere, {@code mmap}/{@code madvise}/{@code munmap} on Linux ({@code null} elsewhere).
 * <p>
 * Linking a downcall makes classes (a binding per signature), which is most of a fresh JVM's first tensor: ~0.1 s
 * for these five. The agent's {@code premain} links them on a thread of their own while the program starts
 * ({@link Preload}, with {@link #link}), and the first tensor finds them ready or waits for that thread's class
 * initialisation. This class uses only the JDK, so initialising it on two threads cannot deadlock.
 */
public final class Libc {
    static final MethodHandle MALLOC;
    static final MethodHandle FREE;
    static final MethodHandle MMAP;
    static final MethodHandle MADVISE;
    static final MethodHandle MUNMAP;

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        MALLOC = linker.downcallHandle(libc.find("malloc").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        FREE = linker.downcallHandle(libc.find("free").orElseThrow(), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
        boolean linux = System.getProperty("os.name", "").startsWith("Linux");
        MMAP = linux ? link(linker, libc, "mmap", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG)) : null;
        MADVISE = linux ? link(linker, libc, "madvise", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT)) : null;
        MUNMAP = linux ? link(linker, libc, "munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG)) : null;
    }

    private Libc() {
    }

    private static MethodHandle link(Linker linker, SymbolLookup libc, String name, FunctionDescriptor signature) {
        Optional<MemorySegment> symbol = libc.find(name);
        return symbol.map(s -> linker.downcallHandle(s, signature)).orElse(null);
    }

    /** Does nothing but, called first, initialise this class, which links the functions (for {@link Preload}). */
    public static void link() {
    }
}
