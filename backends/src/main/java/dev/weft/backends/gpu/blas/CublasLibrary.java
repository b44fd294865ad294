package dev.weft.backends.gpu.blas;

import dev.weft.spi.Setting;
import dev.weft.backends.ffi.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * cuBLAS bound through FFM: the {@code _v2} handle, stream and GEMM entry points of {@code cublas_api.h}, and
 * {@code cublasStatus_t} codes turned into exceptions.
 *
 * <p>Handles, streams and device matrices are pointers Java never dereferences; they are {@code long}s declared
 * as 64-bit integers, which the LP64 C ABIs pass exactly like pointers. The scalars {@code alpha} and
 * {@code beta} are host pointers (cuBLAS's default {@code CUBLAS_POINTER_MODE_HOST}: read before the call
 * returns). The methods are the cuBLAS functions of the same name and return the status unchecked;
 * {@link #check} turns one into an exception.
 *
 * <p>Which library: the file named by the system property {@value #LIBRARY_PROPERTY}, else by the environment
 * variable {@value #LIBRARY_ENV}, else the first of {@code libcublas.so.13}, {@code .12}, {@code .11} that the
 * dynamic linker finds ({@link #candidates}). A library that loads may still be unusable (cuBLAS 13 on a CUDA 12
 * driver cannot create a handle): {@link CublasMatmul#open} goes on to the next candidate then.
 */
public final class CublasLibrary {
    /** System property naming the cuBLAS library (a file name or path); wins over {@link #LIBRARY_ENV}. */
    public static final String LIBRARY_PROPERTY = "weft.cublas.lib";
    /** Environment variable naming the cuBLAS library when {@link #LIBRARY_PROPERTY} is not set. */
    public static final String LIBRARY_ENV = "WEFT_CUBLAS_LIB";
    /** The libraries tried, newest first, when neither override is set. */
    public static final List<String> DEFAULT_NAMES = List.of("libcublas.so.13", "libcublas.so.12", "libcublas.so.11");

    /** {@code cublasOperation_t}. */
    static final int OP_N = 0;
    static final int OP_T = 1;
    private static final Map<Integer, String> STATUS_NAMES = Map.of(
            1, "CUBLAS_STATUS_NOT_INITIALIZED", 3, "CUBLAS_STATUS_ALLOC_FAILED", 7, "CUBLAS_STATUS_INVALID_VALUE",
            8, "CUBLAS_STATUS_ARCH_MISMATCH", 11, "CUBLAS_STATUS_MAPPING_ERROR", 13, "CUBLAS_STATUS_EXECUTION_FAILED",
            14, "CUBLAS_STATUS_INTERNAL_ERROR", 15, "CUBLAS_STATUS_NOT_SUPPORTED", 16, "CUBLAS_STATUS_LICENSE_ERROR");

    private final String file;
    private final SymbolLookup symbols;
    private final MethodHandle create;
    private final MethodHandle destroy;
    private final MethodHandle setStream;
    private final MethodHandle sgemm;
    private final MethodHandle dgemm;
    private final MethodHandle sgemmStridedBatched;
    private final MethodHandle dgemmStridedBatched;

    /**
     * Binds {@code file}: {@link IllegalArgumentException} when it cannot be opened, {@link NoSuchElementException}
     * when a function is missing.
     */
    CublasLibrary(String file) {
        this.file = file;
        this.symbols = SymbolLookup.libraryLookup(file, Arena.global());
        create = fn("cublasCreate_v2", ADDRESS);
        destroy = fn("cublasDestroy_v2", JAVA_LONG);
        setStream = fn("cublasSetStream_v2", JAVA_LONG, JAVA_LONG);
        sgemm = fn("cublasSgemm_v2", JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS,
                JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
        dgemm = fn("cublasDgemm_v2", JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS,
                JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
        sgemmStridedBatched = fn("cublasSgemmStridedBatched", JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS,
                JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT);
        dgemmStridedBatched = fn("cublasDgemmStridedBatched", JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS,
                JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT);
    }

    /** Opens cuBLAS by the class comment's rules; fails naming every library tried. */
    public static CublasLibrary load() {
        return load(candidates());
    }

    /** The libraries to try, in order: the override if one is set, else {@link #DEFAULT_NAMES}. */
    public static List<String> candidates() {
        String override = Setting.CUBLAS_LIB.text();
        return override == null ? DEFAULT_NAMES : List.of(override);
    }

    /** The first of {@code names} that loads with every function bound here. */
    static CublasLibrary load(List<String> names) {
        List<String> errors = new ArrayList<>();
        for (String name : names) {
            try {
                return new CublasLibrary(name);
            } catch (IllegalArgumentException | NoSuchElementException e) {
                errors.add(name + ": " + e.getMessage());
            }
        }
        throw unusable("loaded", errors);
    }

    /** The error when none of the libraries tried is usable: {@code errors} has one entry per library. */
    static IllegalStateException unusable(String what, List<String> errors) {
        return new IllegalStateException("no cuBLAS library could be " + what + ": " + String.join("; ", errors)
                + " (install the CUDA toolkit's cuBLAS, or set -D" + LIBRARY_PROPERTY + " or " + LIBRARY_ENV + ")");
    }

    /** Throws {@link CublasException} naming {@code function} unless {@code status} is {@code CUBLAS_STATUS_SUCCESS}. */
    static void check(int status, String function) {
        if (status != 0) {
            throw new CublasException(function + " failed: " + STATUS_NAMES.getOrDefault(status, "cublasStatus_t")
                    + " (" + status + ")");
        }
    }

    /** A cuBLAS failure. */
    public static final class CublasException extends RuntimeException {
        CublasException(String message) {
            super(message);
        }
    }

    int create(MemorySegment handle) {
        try {
            return (int) create.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int destroy(long handle) {
        try {
            return (int) destroy.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int setStream(long handle, long stream) {
        try {
            return (int) setStream.invokeExact(handle, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int sgemm(long handle, int transa, int transb, int m, int n, int k, MemorySegment alpha, long a, int lda,
              long b, int ldb, MemorySegment beta, long c, int ldc) {
        try {
            return (int) sgemm.invokeExact(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int dgemm(long handle, int transa, int transb, int m, int n, int k, MemorySegment alpha, long a, int lda,
              long b, int ldb, MemorySegment beta, long c, int ldc) {
        try {
            return (int) dgemm.invokeExact(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int sgemmStridedBatched(long handle, int transa, int transb, int m, int n, int k, MemorySegment alpha, long a,
                            int lda, long strideA, long b, int ldb, long strideB, MemorySegment beta, long c,
                            int ldc, long strideC, int batch) {
        try {
            return (int) sgemmStridedBatched.invokeExact(handle, transa, transb, m, n, k, alpha, a, lda, strideA,
                    b, ldb, strideB, beta, c, ldc, strideC, batch);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int dgemmStridedBatched(long handle, int transa, int transb, int m, int n, int k, MemorySegment alpha, long a,
                            int lda, long strideA, long b, int ldb, long strideB, MemorySegment beta, long c,
                            int ldc, long strideC, int batch) {
        try {
            return (int) dgemmStridedBatched.invokeExact(handle, transa, transb, m, n, k, alpha, a, lda, strideA,
                    b, ldb, strideB, beta, c, ldc, strideC, batch);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    private MethodHandle fn(String name, MemoryLayout... args) {
        return Downcalls.intFunction(symbols, name, args);
    }

    @Override
    public String toString() {
        return file;
    }
}
