package dev.weft.backends.cpu.blas;

import dev.weft.spi.CoreShare;
import dev.weft.spi.Setting;
import dev.weft.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.logging.Logger;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * {@code cblas_sgemm} and {@code cblas_dgemm} of OpenBLAS ({@code libopenblas.so.0}) through FFM, loaded on first
 * use. When the library is absent, or {@link Setting#BLAS} ({@code -Dweft.blas}) is {@code java} (read at each use),
 * {@link #isAvailable} is false and callers use their own kernel. {@link #implementation} names what runs
 * ({@code openblas} or {@code java}).
 */
public final class OpenBlas {
    private static final int ROW_MAJOR = 101;
    private static final int NO_TRANS = 111;
    private static final int TRANS = 112;
    private static final MethodHandle SGEMM;
    private static final MethodHandle DGEMM;
    /**
     * Products of fewer multiply-adds run on one OpenBLAS thread: waking the others cost more than they save. At 1
     * rank on 2 cores, the MLP step's {@code [128,512]x[512,10]} took 106 us on 2 threads and 25 us on one (NumPy
     * 16 us); a 4M-term product takes about 0.1 ms on one core.
     */
    static final long ONE_THREAD_BELOW = 1L << 22;
    /**
     * The first of the variables by which a user chooses OpenBLAS's threads that is set, or null: one set leaves the
     * count alone.
     */
    private static final String USER_THREAD_VARIABLE = Stream.of("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
            "OMP_NUM_THREADS").filter(v -> System.getenv(v) != null).findFirst().orElse(null);
    /** {@code openblas_set_num_threads}, when Weft chose the thread count; else null (the count is left alone). */
    private static final MethodHandle SET_THREADS;

    static {
        MethodHandle s = null;
        MethodHandle d = null;
        Optional<SymbolLookup> lib = load();
        if (lib.isPresent()) {
            Linker linker = Linker.nativeLinker();
            s = lib.get().find("cblas_sgemm").map(a -> linker.downcallHandle(a, FunctionDescriptor.ofVoid(
                    JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_FLOAT, ADDRESS, JAVA_INT,
                    ADDRESS, JAVA_INT, JAVA_FLOAT, ADDRESS, JAVA_INT))).orElse(null);
            d = lib.get().find("cblas_dgemm").map(a -> linker.downcallHandle(a, FunctionDescriptor.ofVoid(
                    JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_DOUBLE, ADDRESS, JAVA_INT,
                    ADDRESS, JAVA_INT, JAVA_DOUBLE, ADDRESS, JAVA_INT))).orElse(null);
        }
        SGEMM = s;
        DGEMM = d;
        SET_THREADS = lib.isPresent() ? threadSetter(lib.get()) : null;
        String threads = lib.isPresent() ? shareCores() : "";
        Logger.getLogger(OpenBlas.class.getName()).fine(() -> "libopenblas.so.0 " + (SGEMM != null && DGEMM != null
                ? "loaded" : "not found"));
        if (Setting.DEBUG.on() && lib.isPresent()) {
            System.err.println("weft: OpenBLAS " + threads);
        }
    }

    /**
     * {@code openblas_set_num_threads}, unless the user chose OpenBLAS's threads (any of the variables OpenBLAS reads
     * is set) or the library has no such function.
     */
    private static MethodHandle threadSetter(SymbolLookup lib) {
        return USER_THREAD_VARIABLE != null ? null : lib.find("openblas_set_num_threads")
                .map(a -> Linker.nativeLinker().downcallHandle(a, FunctionDescriptor.ofVoid(JAVA_INT))).orElse(null);
    }

    /**
     * Gives OpenBLAS this rank's share of the cores ({@link CoreShare#CORES}) unless the user chose its threads:
     * by default it starts one per processor in every rank, so 2 ranks on 2 cores ran 4 BLAS threads beside MPI's
     * polling. Returns what was decided, for {@code WEFT_DEBUG}.
     */
    private static String shareCores() {
        if (USER_THREAD_VARIABLE != null) {
            return "threads as " + USER_THREAD_VARIABLE + "=" + System.getenv(USER_THREAD_VARIABLE) + " says";
        }
        if (SET_THREADS == null) {
            return "threads left at its default (no openblas_set_num_threads)";
        }
        setThreads(CoreShare.CORES);
        return CoreShare.CORES + " thread(s), this rank's share of the cores; 1 for products under "
                + ONE_THREAD_BELOW + " multiply-adds";
    }

    private static void setThreads(int n) {
        try {
            SET_THREADS.invokeExact(n);
        } catch (Throwable t) {
            throw new IllegalStateException("openblas_set_num_threads failed", t);
        }
    }

    private OpenBlas() {
    }

    private static Optional<SymbolLookup> load() {
        try {
            return Optional.of(SymbolLookup.libraryLookup("libopenblas.so.0", Arena.global()));
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return Optional.empty();
        }
    }

    /**
     * Initialises this class, which loads OpenBLAS, and runs a first 1x1 product (for {@code Preload}). Loading it
     * (the library's own start and threads, linking the downcalls, the first call's method handles) took 65-80 ms of
     * a fresh JVM's first matrix product.
     */
    public static void warmUp() {
        if (isAvailable(DType.F32)) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment one = arena.allocate(JAVA_FLOAT, 3);
                gemm(DType.F32, one, one.asSlice(4), one.asSlice(8), 1, 1, 1);
            }
        }
    }

    /** True when {@link #gemm} can run products of {@code t}. */
    public static boolean isAvailable(DType t) {
        return (t == DType.F32 ? SGEMM != null : t == DType.F64 && DGEMM != null)
                && Setting.BLAS.choice().equals("native");
    }

    /** {@code openblas} when OpenBLAS runs f32 and f64 products, else {@code java}. */
    public static String implementation() {
        return isAvailable(DType.F32) && isAvailable(DType.F64) ? "openblas" : "java";
    }

    /**
     * Overwrites {@code c} ({@code m x n}) with {@code a} ({@code m x k}) times {@code b} ({@code k x n}), all
     * row-major and dense, of dtype {@code t} (F32 or F64, {@link #isAvailable}). Heap segments are copied to
     * native memory for the call.
     */
    public static void gemm(DType t, MemorySegment a, MemorySegment b, MemorySegment c, int m, int k, int n) {
        gemm(t, a, b, c, m, k, n, false, false);
    }

    /**
     * As {@link #gemm(DType, MemorySegment, MemorySegment, MemorySegment, int, int, int)}, {@code a} stored as its
     * transpose ({@code k x m}) if {@code transA}, {@code b} as its transpose ({@code n x k}) if {@code transB}.
     */
    public static void gemm(DType t, MemorySegment a, MemorySegment b, MemorySegment c, int m, int k, int n,
                            boolean transA, boolean transB) {
        if (m == 0 || n == 0) {
            return;
        }
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment na = nativeCopy(a, scratch);
            MemorySegment nb = nativeCopy(b, scratch);
            MemorySegment nc = c.isNative() ? c : scratch.allocate(c.byteSize(), 64);
            int lda = Math.max(1, transA ? m : k);
            int ldb = Math.max(1, transB ? k : n);
            int ldc = Math.max(1, n);
            int opA = transA ? TRANS : NO_TRANS, opB = transB ? TRANS : NO_TRANS;
            // OpenBLAS splits a product's rows and columns among its threads, never the sum over k, so the count
            // changes no result; the setting is the process's, and another rank's thread may meet it changed
            boolean oneThread = SET_THREADS != null && CoreShare.CORES > 1 && (long) m * n * k < ONE_THREAD_BELOW;
            if (oneThread) {
                setThreads(1);
            }
            try {
                if (t == DType.F32) {
                    SGEMM.invokeExact(ROW_MAJOR, opA, opB, m, n, k, 1.0f, na, lda, nb, ldb, 0.0f, nc, ldc);
                } else {
                    DGEMM.invokeExact(ROW_MAJOR, opA, opB, m, n, k, 1.0, na, lda, nb, ldb, 0.0, nc, ldc);
                }
            } finally {
                if (oneThread) {
                    setThreads(CoreShare.CORES);
                }
            }
            if (nc != c) {
                c.copyFrom(nc);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cblas gemm failed", e);
        }
    }

    private static MemorySegment nativeCopy(MemorySegment s, Arena arena) {
        return s.isNative() ? s : arena.allocate(Math.max(1, s.byteSize()), 64).copyFrom(s);
    }
}
