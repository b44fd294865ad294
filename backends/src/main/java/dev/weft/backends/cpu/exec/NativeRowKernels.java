package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.cc.CCompiler;
import dev.weft.backends.ffi.Downcalls;
import dev.weft.prim.ElementwiseOp;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Native code for two kernels over rows that the JVM otherwise runs as element loops, compiled late (each took C2
 * 0.1-0.2 s of a 2-core machine's CPU in each rank, during a training step's first tens of steps, while the
 * interpreter and C1's profiling code ran them):
 * <ul>
 * <li><b>Folds</b>: floating reductions of rows, each of {@code rows} contiguous rows of {@code length} elements
 * folded into one output element, as {@code Reductions.accumulate} folds a run (element {@code p} into lane
 * {@code p % 8}, in double, the lanes combined in one fixed tree, the result combined with the output element and
 * rounded once), so the bits are the JVM kernel's. A softmax's row sums and a conjugate-gradient solver's dot
 * products are such folds (0.1-0.4 ms for a {@code [128, 10]} row sum before the JIT compiled the kernel).</li>
 * <li><b>Repeats</b>: each element of a dense input repeated along a row ({@code broadcast_in_dim} along the last
 * axis, as a softmax's row maximum back over its row), bits copied.</li>
 * </ul>
 * One library holds every operator, dtype and element size; it is loaded from disk when an executable that uses it
 * is built, or compiled once on {@link NativeLoops}'s background thread while the JVM's kernels run. Its functions
 * take the native loops' form and downcall, so they link nothing of their own.
 */
final class NativeRowKernels {
    /**
     * Elements one call folds or writes at most: the row kernels share the native loops' critical downcall
     * ({@link NativeLoopLinking}), which holds back the JVM's safepoints until it returns, so a long call runs in
     * pieces of about a millisecond, a row longer than this in several (a fold's lanes carried from piece to piece).
     */
    static final long SAFEPOINT_ELEMENTS = 1 << 20;
    private static final List<ElementwiseOp> OPS = List.of(ElementwiseOp.ADD, ElementwiseOp.MUL, ElementwiseOp.MAX,
            ElementwiseOp.MIN);
    private static final List<DType> DTYPES = List.of(DType.F32, DType.F64);
    /** The element sizes repeats copy, in bytes. */
    private static final List<Integer> SIZES = List.of(1, 4, 8);
    private static final Map<CCompiler, NativeRowKernels> LIBRARIES = new ConcurrentHashMap<>();

    private final CCompiler cc;
    private final String body = body();
    private final String source = CLoopEmitter.PRELUDE + body;
    private final String key;
    private final AtomicBoolean claimed = new AtomicBoolean();
    /** Per dtype, per operator, once the library is loaded. */
    private volatile Map<DType, Map<ElementwiseOp, MethodHandle>> folds;
    /** Per element size, once the library is loaded. */
    private volatile Map<Integer, MethodHandle> repeats;

    private NativeRowKernels(CCompiler cc) {
        this.cc = cc;
        this.key = cc.key(CLoopEmitter.PRELUDE, body);
    }

    /** Whether {@code r} over {@code t} has a native fold (a compiler may still be missing). */
    static boolean covers(ElementwiseOp r, DType t) {
        return DTYPES.contains(t) && OPS.contains(r);
    }

    /**
     * The row kernels of the compiler configured now, made native: loaded from disk at once, else compiled in the
     * background (once per compiler); null without a compiler.
     */
    static NativeRowKernels prepare() {
        Optional<CCompiler> cc = NativeLoops.configuredCompiler();
        if (cc.isEmpty()) {
            return null;
        }
        NativeRowKernels kernels = LIBRARIES.computeIfAbsent(cc.get(), NativeRowKernels::new);
        kernels.claim();
        return kernels;
    }

    /**
     * Folds rows {@code [0, rows)} of {@code in} (row-major, {@code length} elements each) into elements
     * {@code [0, rows)} of {@code out} by {@code r}, in native code; false (nothing done) when the library is not
     * loaded yet or a segment fails a check the JVM's kernel would make (native, alive, accessible to this thread,
     * the output writable, every element inside its segment and aligned).
     */
    boolean fold(ElementwiseOp r, DType t, MemorySegment in, MemorySegment out, long rows, long length) {
        Map<DType, Map<ElementwiseOp, MethodHandle>> loaded = folds;
        Map<ElementwiseOp, MethodHandle> byOp = loaded == null ? null : loaded.get(t);
        MethodHandle f = byOp == null ? null : byOp.get(r);
        if (f == null || rows < 0 || length < 1 || !usable(in, false, elements(rows, length), t.byteSize())
                || !usable(out, true, rows, t.byteSize())) {
            return false;
        }
        long es = t.byteSize();
        long[] strides = {length * es, es, length};
        if (length <= SAFEPOINT_ELEMENTS) {
            long perCall = SAFEPOINT_ELEMENTS / length;
            for (long row = 0; row < rows; row += perCall) {
                long n = Math.min(perCall, rows - row);
                call(f, new long[] {in.address() + row * length * es, out.address() + row * es, 0}, strides, n, 0,
                        length);
            }
            return true;
        }
        // each row in pieces, its lanes kept between them in native memory
        try (Arena arena = Arena.ofConfined()) {
            long lanes = arena.allocate(8 * Double.BYTES, Double.BYTES).address();
            for (long row = 0; row < rows; row++) {
                long[] addresses = {in.address() + row * length * es, out.address() + row * es, lanes};
                for (long from = 0; from < length; from += SAFEPOINT_ELEMENTS) {
                    call(f, addresses, strides, 1, from, Math.min(length, from + SAFEPOINT_ELEMENTS));
                }
            }
        }
        return true;
    }

    /**
     * Each of the first {@code rows} elements of {@code in} (dense, {@code elementSize} bytes each) repeated
     * {@code length} times into {@code out}, row after row, in native code; false (nothing done) when the library is
     * not loaded yet or a segment fails a check (as {@link #fold}'s).
     */
    boolean repeat(MemorySegment in, MemorySegment out, long rows, long length, int elementSize) {
        Map<Integer, MethodHandle> loaded = repeats;
        MethodHandle f = loaded == null ? null : loaded.get(elementSize);
        if (f == null || rows < 0 || length < 1 || !usable(in, false, rows, elementSize)
                || !usable(out, true, elements(rows, length), elementSize)) {
            return false;
        }
        long[] strides = {elementSize, length * elementSize};
        // whole rows per call up to the bound; a longer row, one at a time, in pieces
        long perCall = Math.max(1, SAFEPOINT_ELEMENTS / length);
        for (long row = 0; row < rows; row += perCall) {
            long[] addresses = {in.address() + row * elementSize, out.address() + row * length * elementSize};
            for (long from = 0; from < length; from += SAFEPOINT_ELEMENTS) {
                call(f, addresses, strides, Math.min(perCall, rows - row), from,
                        Math.min(length, from + SAFEPOINT_ELEMENTS));
            }
        }
        return true;
    }

    /**
     * One downcall: {@code addresses} the first row's input, its output and (for pieces of a row) the lanes,
     * {@code strides} the rows' byte strides and their length.
     */
    private static void call(MethodHandle f, long[] addresses, long[] strides, long rows, long from, long to) {
        try {
            f.invokeExact(MemorySegment.ofArray(addresses), MemorySegment.ofArray(strides), rows, from, to);
        } catch (Throwable e) {
            throw Downcalls.rethrow(e);
        }
    }

    /** {@code rows * length}, or -1 when it overflows. */
    private static long elements(long rows, long length) {
        try {
            return Math.multiplyExact(rows, length);
        } catch (ArithmeticException overflow) {
            return -1;
        }
    }

    /**
     * Whether native code may read (and, if {@code written}, write) {@code elements} elements of {@code es} bytes
     * from the start of {@code s} (-1: too many).
     */
    private static boolean usable(MemorySegment s, boolean written, long elements, long es) {
        return elements >= 0 && elements <= Long.MAX_VALUE / es && NativeFusedLoop.reachable(s, written)
                && s.address() % es == 0 && s.byteSize() >= elements * es;
    }

    /**
     * The C source of every fold, each named {@code weft_fold_<dtype>_<op>}, and of every repeat,
     * {@code weft_repeat_<bytes>}, without the prelude.
     */
    private static String body() {
        StringBuilder c = new StringBuilder();
        for (DType t : DTYPES) {
            for (ElementwiseOp r : OPS) {
                c.append('\n').append(function(r, t));
            }
        }
        for (int size : SIZES) {
            c.append('\n').append(repeat(size));
        }
        return c.toString();
    }

    private static String symbol(ElementwiseOp r, DType t) {
        return "weft_fold_" + t.specName() + "_" + r.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * One fold, called as a native loop is ({@link NativeLoopLinking}): {@code a} holds the first row's input
     * address, its output element's and a lanes buffer's (8 doubles), {@code s} the input's and the output's row
     * strides in bytes and the rows' length; elements {@code [from, to)} of each of {@code rows} rows. A row whose
     * pieces start after element 0 continues the lanes in the buffer, and one whose piece ends before its length
     * leaves them there; the lanes start at the operator's identity ({@code -0.0} for a sum, so that a sum of
     * {@code -0.0}s stays so), element {@code p} goes to lane {@code p % 8}, and a finished row's lanes combine in
     * the fixed tree into its output element. {@code from} is a multiple of 8.
     */
    private static String function(ElementwiseOp r, DType t) {
        String type = CLoopEmitter.value(t);
        String identity = switch (r) {
            case ADD -> "-0.0";
            case MUL -> "1.0";
            case MAX -> "-INFINITY";
            default -> "INFINITY";
        };
        StringBuilder c = new StringBuilder();
        c.append("void ").append(symbol(r, t)).append("(const int64_t *a, const int64_t *s, int64_t rows, ")
                .append("int64_t from, int64_t to) {\n");
        c.append("    const ").append(type).append(" *x = (const ").append(type).append(" *) a[0];\n");
        c.append("    ").append(type).append(" *y = (").append(type).append(" *) a[1];\n");
        c.append("    double *kept = (double *) a[2];\n");
        c.append("    for (int64_t r = 0; r < rows; r++) {\n");
        c.append("        double l[8];\n");
        c.append("        for (int k = 0; k < 8; k++) l[k] = from == 0 ? ").append(identity).append(" : kept[k];\n");
        c.append("        int64_t i = from;\n");
        c.append("        for (; i + 8 <= to; i += 8) {\n");
        c.append("            for (int k = 0; k < 8; k++) l[k] = ").append(combine(r, "l[k]", "(double) x[i + k]"))
                .append(";\n");
        c.append("        }\n");
        c.append("        for (int k = 0; i < to; i++, k++) l[k] = ").append(combine(r, "l[k]", "(double) x[i]"))
                .append(";\n");
        c.append("        if (to < s[2]) {\n");
        c.append("            for (int k = 0; k < 8; k++) kept[k] = l[k];\n");
        c.append("        } else {\n");
        String v = combine(r, combine(r, combine(r, "l[0]", "l[1]"), combine(r, "l[2]", "l[3]")),
                combine(r, combine(r, "l[4]", "l[5]"), combine(r, "l[6]", "l[7]")));
        c.append("            const double v = ").append(v).append(";\n");
        c.append("            *y = (").append(type).append(") ").append(combine(r, "(double) *y", "v"))
                .append(";\n");
        c.append("        }\n");
        c.append("        x = (const ").append(type).append(" *) ((const char *) x + s[0]);\n");
        c.append("        y = (").append(type).append(" *) ((char *) y + s[1]);\n");
        c.append("    }\n}\n");
        return c.toString();
    }

    /**
     * One repeat, called as a native loop is: {@code a} holds the first row's input element address and its
     * output row's, {@code s} their strides in bytes; elements {@code [from, to)} of each of {@code rows} rows
     * are the row's input element (its bits, as unsigned integers of its size).
     */
    private static String repeat(int size) {
        String type = "uint" + size * 8 + "_t";
        return "void weft_repeat_" + size + "(const int64_t *a, const int64_t *s, int64_t rows, int64_t from, "
                + "int64_t to) {\n"
                + "    const char *x = (const char *) a[0];\n"
                + "    char *y = (char *) a[1];\n"
                + "    for (int64_t r = 0; r < rows; r++, x += s[0], y += s[1]) {\n"
                + "        const " + type + " v = *(const " + type + " *) x;\n"
                + "        " + type + " *row = (" + type + " *) y;\n"
                + "        for (int64_t i = from; i < to; i++) row[i] = v;\n"
                + "    }\n}\n";
    }

    /** {@code a r b} in double, as {@code Reductions.combine}: Java's {@code Math.max}/{@code min} for extremes. */
    private static String combine(ElementwiseOp r, String a, String b) {
        return switch (r) {
            case ADD -> "(" + a + " + " + b + ")";
            case MUL -> "(" + a + " * " + b + ")";
            case MAX -> "wmax(" + a + ", " + b + ")";
            default -> "wmin(" + a + ", " + b + ")";
        };
    }

    /** Loads the library from disk, or has it compiled in the background; the first call only. */
    private void claim() {
        if (!claimed.compareAndSet(false, true)) {
            return;
        }
        Optional<Path> onDisk = cc.library(key);
        if (onDisk.isPresent()) {
            load(onDisk.get());
        } else {
            NativeLoops.inBackground(this::compile);
        }
    }

    private void compile() {
        try {
            Path library = cc.compile(key, source);
            load(library);
            cc.done(library);
        } catch (IOException | RuntimeException | LinkageError e) {
            if (!CCompiler.exiting()) {
                NativeLoops.warn("could not compile the row kernels to native code, they run on the JVM: " + e);
            }
        }
    }

    private void load(Path library) {
        try {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
            Map<DType, Map<ElementwiseOp, MethodHandle>> all = new EnumMap<>(DType.class);
            for (DType t : DTYPES) {
                Map<ElementwiseOp, MethodHandle> byOp = new EnumMap<>(ElementwiseOp.class);
                for (ElementwiseOp r : OPS) {
                    byOp.put(r, NativeLoopLinking.UNBOUND.bindTo(lookup.findOrThrow(symbol(r, t))));
                }
                all.put(t, byOp);
            }
            Map<Integer, MethodHandle> bySize = new HashMap<>();
            for (int size : SIZES) {
                bySize.put(size, NativeLoopLinking.UNBOUND.bindTo(lookup.findOrThrow("weft_repeat_" + size)));
            }
            repeats = Map.copyOf(bySize);
            folds = all;
        } catch (IllegalArgumentException | java.util.NoSuchElementException e) {
            NativeLoops.warn("could not load the row kernels' library " + library + ", they run on the JVM: "
                    + e.getMessage());
        }
    }
}
