package dev.weft.backends.gpu;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A stub of a native GPU library, compiled with gcc from {@code src/test/c} once per JVM (tests are skipped when
 * gcc is missing), with access to its per-thread call log and failure injection (see {@code stub_log.h}).
 */
public final class NativeStub {
    private static final ConcurrentHashMap<String, NativeStub> BUILT = new ConcurrentHashMap<>();

    /** The stub's file, to pass as the library override. */
    public final Path file;
    private final MethodHandle calls;
    private final MethodHandle reset;
    private final MethodHandle fail;
    private final SymbolLookup symbols;

    private NativeStub(Path file) {
        this.file = file;
        this.symbols = SymbolLookup.libraryLookup(file, Arena.global());
        Linker linker = Linker.nativeLinker();
        calls = linker.downcallHandle(symbols.findOrThrow("stub_calls"), FunctionDescriptor.of(JAVA_LONG, ADDRESS,
                JAVA_LONG));
        reset = linker.downcallHandle(symbols.findOrThrow("stub_reset"), FunctionDescriptor.ofVoid());
        fail = linker.downcallHandle(symbols.findOrThrow("stub_fail"), FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
    }

    /** The stub built from {@code src/test/c/<source>} as a library file named {@code soname}. */
    public static NativeStub build(String source, String soname) {
        NativeStub s = BUILT.get(soname);
        if (s == null) {
            s = compile(source, soname);
            BUILT.putIfAbsent(soname, s);
        }
        return BUILT.get(soname);
    }

    private static synchronized NativeStub compile(String source, String soname) {
        try {
            Path dir = Files.createTempDirectory("weft-stub");
            Path out = dir.resolve(soname);
            Process p;
            try {
                p = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O1", "-o", out.toString(),
                        Path.of("src/test/c", source).toString()).redirectErrorStream(true).start();
            } catch (IOException e) {
                assumeTrue(false, "gcc is not available: " + e.getMessage());
                throw e;
            }
            String log = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("gcc failed on " + source + ":\n" + log);
            }
            return new NativeStub(out);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The calls this thread made since its last {@link #reset}, one line each. */
    public List<String> calls() {
        return lines(calls);
    }

    /** The lines written by the stub's {@code size_t name(char *buf, size_t cap)} report function. */
    public List<String> lines(String name) {
        return lines(Linker.nativeLinker().downcallHandle(symbols.findOrThrow(name),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG)));
    }

    private static List<String> lines(MethodHandle report) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(1 << 16);
            long n = (long) report.invokeExact(buf, buf.byteSize());
            String text = buf.getString(0);
            if (n != text.length()) {
                throw new IllegalStateException("stub report truncated");
            }
            return text.isEmpty() ? List.of() : Arrays.asList(text.split("\n"));
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Calls the stub's {@code void name(void)} control function. */
    public void control(String name) {
        MethodHandle h = Linker.nativeLinker().downcallHandle(symbols.findOrThrow(name), FunctionDescriptor.ofVoid());
        try {
            h.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Clears this thread's log and any injected failure. */
    public void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Makes this thread's next call of {@code function} return {@code code}. */
    public void fail(String function, int code) {
        try (Arena arena = Arena.ofConfined()) {
            fail.invokeExact(arena.allocateFrom(function), code);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Calls the stub's {@code void name(int)} control function. */
    public void control(String name, int value) {
        MethodHandle h = Linker.nativeLinker().downcallHandle(symbols.findOrThrow(name),
                FunctionDescriptor.ofVoid(JAVA_INT));
        try {
            h.invokeExact(value);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
