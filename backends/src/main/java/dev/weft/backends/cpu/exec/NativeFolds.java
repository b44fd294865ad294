package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.cc.CCompiler;
import dev.weft.backends.ffi.Downcalls;
import dev.weft.prim.ElementwiseOp;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Floating reductions of rows as native code: each of {@code rows} contiguous rows of {@code length} elements
 * folded into one output element, as {@code Reductions.accumulate} folds a run (element {@code p} into lane
 * {@code p % 8}, in double, the lanes combined in one fixed tree, the result combined with the output element and
 * rounded once), so the bits are the JVM kernel's. A softmax's row sums and a conjugate-gradient solver's dot
 * products are such folds; on the JVM they ran in the interpreter and C1's profiling code for a program's first
 * tens of steps (0.1-0.4 ms for a {@code [128, 10]} row sum), and C2 then compiled the kernel (about 0.15 s of a
 * 2-core machine's CPU in each rank). One library holds every operator and dtype; it is loaded from disk when an
 * executable that folds rows is built, or compiled once on {@link NativeLoops}'s background thread while the JVM's
 * kernel runs.
 */
final class NativeFolds {
    /**
     * {@code void f(int64_t x, int64_t y, int64_t xStride, int64_t yStride, int64_t rows, int64_t length)}, unbound:
     * addresses and byte strides as integers, so a call passes no array and is not a critical one (a long fold lets
     * the JVM reach safepoints).
     */
    private static final MethodHandle UNBOUND = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    private static final ElementwiseOp[] OPS = {
        ElementwiseOp.ADD, ElementwiseOp.MUL, ElementwiseOp.MAX, ElementwiseOp.MIN
    };
    private static final Map<CCompiler, NativeFolds> LIBRARIES = new ConcurrentHashMap<>();

    private final CCompiler cc;
    private final String source = source();
    private final String key;
    private final AtomicBoolean claimed = new AtomicBoolean();
    /** Per dtype, per operator, once the library is loaded. */
    private volatile Map<DType, Map<ElementwiseOp, MethodHandle>> functions;

    private NativeFolds(CCompiler cc) {
        this.cc = cc;
        this.key = cc.key(source);
    }

    /** Initialises this class, which links the folds' downcall, off a first call's path ({@link NativeLoopLinking}). */
    static void link() {
    }

    /** Whether {@code r} over {@code t} has a native fold (a compiler may still be missing). */
    static boolean covers(ElementwiseOp r, DType t) {
        return (t == DType.F32 || t == DType.F64) && (r == ElementwiseOp.ADD || r == ElementwiseOp.MUL
                || r == ElementwiseOp.MAX || r == ElementwiseOp.MIN);
    }

    /**
     * The folds of the compiler configured now, made native: loaded from disk at once, else compiled in the
     * background (once per compiler); null without a compiler.
     */
    static NativeFolds prepare() {
        Optional<CCompiler> cc = NativeLoops.configuredCompiler();
        if (cc.isEmpty()) {
            return null;
        }
        NativeFolds folds = LIBRARIES.computeIfAbsent(cc.get(), NativeFolds::new);
        folds.claim();
        return folds;
    }

    /**
     * Folds rows {@code [0, rows)} of {@code in} (row-major, {@code length} elements each) into elements
     * {@code [0, rows)} of {@code out} by {@code r}, in native code; false (nothing done) when the library is not
     * loaded yet or a segment fails a check the JVM's kernel would make (native, alive, accessible to this thread,
     * the output writable, every element inside its segment and aligned).
     */
    boolean run(ElementwiseOp r, DType t, MemorySegment in, MemorySegment out, long rows, long length) {
        Map<DType, Map<ElementwiseOp, MethodHandle>> loaded = functions;
        Map<ElementwiseOp, MethodHandle> byOp = loaded == null ? null : loaded.get(t);
        MethodHandle f = byOp == null ? null : byOp.get(r);
        if (f == null || rows < 0 || length < 1 || !usable(in, elements(rows, length), t) || !usable(out, rows, t)
                || out.isReadOnly()) {
            return false;
        }
        long es = t.byteSize();
        try {
            f.invokeExact(in.address(), out.address(), length * es, es, rows, length);
        } catch (Throwable e) {
            throw Downcalls.rethrow(e);
        }
        return true;
    }

    /** {@code rows * length}, or -1 when it overflows. */
    private static long elements(long rows, long length) {
        try {
            return Math.multiplyExact(rows, length);
        } catch (ArithmeticException overflow) {
            return -1;
        }
    }

    /** Whether {@code s} can be read natively for {@code elements} elements of {@code t} (-1: too many). */
    private static boolean usable(MemorySegment s, long elements, DType t) {
        long es = t.byteSize();
        return elements >= 0 && elements <= Long.MAX_VALUE / es && s.isNative() && s.scope().isAlive()
                && s.isAccessibleBy(Thread.currentThread()) && s.address() % es == 0 && s.byteSize() >= elements * es;
    }

    /** The C source of every fold, each named {@code weft_fold_<dtype>_<op>}. */
    static String source() {
        StringBuilder c = new StringBuilder(CLoopEmitter.PRELUDE);
        for (DType t : new DType[] {DType.F32, DType.F64}) {
            for (ElementwiseOp r : OPS) {
                c.append('\n').append(function(r, t));
            }
        }
        return c.toString();
    }

    private static String symbol(ElementwiseOp r, DType t) {
        return "weft_fold_" + t.specName() + "_" + r.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * One fold: {@code rows} rows of {@code length} elements from address {@code x}, each folded into the element at
     * {@code y}, both advancing by their stride (bytes) from row to row. The lanes start at the operator's identity
     * ({@code -0.0} for a sum, so that a sum of {@code -0.0}s stays so); whole groups of 8 go to lanes 0-7, the rest
     * to the first lanes in order.
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
        c.append("void ").append(symbol(r, t)).append("(int64_t xa, int64_t ya, int64_t xs, int64_t ys, ")
                .append("int64_t rows, int64_t to) {\n");
        c.append("    const ").append(type).append(" *x = (const ").append(type).append(" *) (intptr_t) xa;\n");
        c.append("    ").append(type).append(" *y = (").append(type).append(" *) (intptr_t) ya;\n");
        c.append("    for (int64_t r = 0; r < rows; r++) {\n");
        c.append("        double l[8];\n");
        c.append("        for (int k = 0; k < 8; k++) l[k] = ").append(identity).append(";\n");
        c.append("        int64_t i = 0;\n");
        c.append("        for (; i + 8 <= to; i += 8) {\n");
        c.append("            for (int k = 0; k < 8; k++) l[k] = ").append(combine(r, "l[k]", "(double) x[i + k]"))
                .append(";\n");
        c.append("        }\n");
        c.append("        for (int k = 0; i < to; i++, k++) l[k] = ").append(combine(r, "l[k]", "(double) x[i]"))
                .append(";\n");
        String v = combine(r, combine(r, combine(r, "l[0]", "l[1]"), combine(r, "l[2]", "l[3]")),
                combine(r, combine(r, "l[4]", "l[5]"), combine(r, "l[6]", "l[7]")));
        c.append("        const double v = ").append(v).append(";\n");
        c.append("        *y = (").append(type).append(") ").append(combine(r, "(double) *y", "v")).append(";\n");
        c.append("        x = (const ").append(type).append(" *) ((const char *) x + xs);\n");
        c.append("        y = (").append(type).append(" *) ((char *) y + ys);\n");
        c.append("    }\n}\n");
        return c.toString();
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
                NativeLoops.warn("could not compile reductions to native code, they run on the JVM: " + e);
            }
        }
    }

    private void load(Path library) {
        try {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
            Map<DType, Map<ElementwiseOp, MethodHandle>> all = new EnumMap<>(DType.class);
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                Map<ElementwiseOp, MethodHandle> byOp = new EnumMap<>(ElementwiseOp.class);
                for (ElementwiseOp r : OPS) {
                    byOp.put(r, UNBOUND.bindTo(lookup.findOrThrow(symbol(r, t))));
                }
                all.put(t, byOp);
            }
            functions = all;
        } catch (IllegalArgumentException | java.util.NoSuchElementException e) {
            NativeLoops.warn("could not load the reductions' library " + library + ", they run on the JVM: "
                    + e.getMessage());
        }
    }
}
