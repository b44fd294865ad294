package dev.weft.backends.gpu.nccl;

import dev.weft.spi.Setting;
import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.ffi.Downcalls;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * NCCL ({@code libnccl.so.2}) bound through FFM: the functions of {@code nccl.h} that Weft uses, the tables from
 * Weft's types to NCCL's enums, and NCCL's error codes turned into exceptions.
 *
 * <p>Device buffers, streams ({@code cudaStream_t}) and communicators ({@code ncclComm_t}) are pointers that Java
 * never dereferences; they are {@code long}s here and declared as 64-bit integers, which the LP64 C ABIs pass
 * exactly like pointers. {@code size_t} counts are {@code long}s, NCCL's enums {@code int}s. The methods are the
 * NCCL functions of the same name and return {@code ncclResult_t} unchecked; {@link #check} turns one into an
 * exception.
 *
 * <table>
 *   <caption>{@code ncclDataType_t} of each Weft dtype</caption>
 *   <tr><th>DType</th><td>BOOL</td><td>I32</td><td>I64</td><td>F32</td><td>F64</td></tr>
 *   <tr><th>NCCL</th><td>ncclUint8 = 1</td><td>ncclInt32 = 2</td><td>ncclInt64 = 4</td><td>ncclFloat32 = 7</td>
 *       <td>ncclFloat64 = 8</td></tr>
 * </table>
 * <table>
 *   <caption>{@code ncclRedOp_t} of each built-in reduce op (NCCL's {@code ncclAvg = 4} has no Weft op)</caption>
 *   <tr><th>RuntimeReduceOp</th><td>SUM</td><td>PROD</td><td>MAX</td><td>MIN</td></tr>
 *   <tr><th>NCCL</th><td>ncclSum = 0</td><td>ncclProd = 1</td><td>ncclMax = 2</td><td>ncclMin = 3</td></tr>
 * </table>
 *
 * <p>Which library: the file named by the system property {@value #LIBRARY_PROPERTY}, else by the environment
 * variable {@value #LIBRARY_ENV}, else {@value #DEFAULT_NAME} through the dynamic linker's search path.
 */
public final class NcclLibrary {
    /** System property naming the NCCL library (a file name or path); wins over {@link #LIBRARY_ENV}. */
    public static final String LIBRARY_PROPERTY = "weft.nccl.lib";
    /** Environment variable naming the NCCL library when {@link #LIBRARY_PROPERTY} is not set. */
    public static final String LIBRARY_ENV = "WEFT_NCCL_LIB";
    public static final String DEFAULT_NAME = "libnccl.so.2";
    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int UNIQUE_ID_BYTES = 128;

    static final int SUCCESS = 0;
    /** {@code ncclInProgress}: a nonblocking communicator is still working, not an error. */
    static final int IN_PROGRESS = 7;
    private static final String[] RESULT_NAMES = {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
            "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"};
    /** {@code typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId}, passed by value. */
    private static final StructLayout UNIQUE_ID =
            MemoryLayout.structLayout(MemoryLayout.sequenceLayout(UNIQUE_ID_BYTES, JAVA_BYTE).withName("internal"));

    private final String file;
    private final SymbolLookup symbols;
    private final MethodHandle getVersion;
    private final MethodHandle getErrorString;
    private final MethodHandle getUniqueId;
    private final MethodHandle commInitRank;
    private final MethodHandle commDestroy;
    private final MethodHandle commAbort;
    private final MethodHandle commGetAsyncError;
    private final MethodHandle allReduce;
    private final MethodHandle allGather;
    private final MethodHandle reduceScatter;
    private final MethodHandle broadcast;
    private final MethodHandle reduce;
    private final MethodHandle send;
    private final MethodHandle recv;
    private final MethodHandle groupStart;
    private final MethodHandle groupEnd;

    private NcclLibrary(String file) {
        this.file = file;
        this.symbols = SymbolLookup.libraryLookup(file, Arena.global());
        getVersion = fn("ncclGetVersion", ADDRESS);
        getErrorString = Linker.nativeLinker().downcallHandle(symbols.findOrThrow("ncclGetErrorString"),
                FunctionDescriptor.of(ADDRESS, JAVA_INT));
        getUniqueId = fn("ncclGetUniqueId", ADDRESS);
        commInitRank = fn("ncclCommInitRank", ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT);
        commDestroy = fn("ncclCommDestroy", JAVA_LONG);
        commAbort = fn("ncclCommAbort", JAVA_LONG);
        commGetAsyncError = fn("ncclCommGetAsyncError", JAVA_LONG, ADDRESS);
        allReduce = fn("ncclAllReduce", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);
        allGather = fn("ncclAllGather", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG);
        reduceScatter = fn("ncclReduceScatter", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG,
                JAVA_LONG);
        broadcast = fn("ncclBroadcast", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);
        reduce = fn("ncclReduce", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG,
                JAVA_LONG);
        send = fn("ncclSend", JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);
        recv = fn("ncclRecv", JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);
        groupStart = fn("ncclGroupStart");
        groupEnd = fn("ncclGroupEnd");
    }

    /** Opens the NCCL library named by the class comment's rules; fails saying which file and how to override. */
    public static NcclLibrary load() {
        String override = Setting.NCCL_LIB.text();
        String name = override != null ? override : DEFAULT_NAME;
        try {
            return new NcclLibrary(name);
        } catch (IllegalArgumentException | java.util.NoSuchElementException e) {
            throw new IllegalStateException("NCCL could not be loaded from " + name + ": " + e.getMessage()
                    + " (install NCCL 2, or set -D" + LIBRARY_PROPERTY + " or " + LIBRARY_ENV + ")", e);
        }
    }

    /** The {@code ncclDataType_t} of {@code dtype} (see the class comment). */
    public static int dataType(DType dtype) {
        return switch (dtype) {
            case BOOL -> 1;
            case I32 -> 2;
            case I64 -> 4;
            case F32 -> 7;
            case F64 -> 8;
        };
    }

    /** The {@code ncclRedOp_t} of a built-in reduce op (see the class comment). */
    public static int reduceOp(RuntimeReduceOp.Builtin op) {
        return switch (op) {
            case SUM -> 0;
            case PROD -> 1;
            case MAX -> 2;
            case MIN -> 3;
        };
    }

    /** {@code ncclGetVersion}: {@code major * 10000 + minor * 100 + patch} (NCCL 2.9 and later). */
    public int version() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            int rc = (int) getVersion.invokeExact(v);
            if (rc != SUCCESS) {
                throw new IllegalStateException(file + ": ncclGetVersion failed: " + describe(rc));
            }
            return v.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Does nothing when {@code result} is {@code ncclSuccess}; otherwise throws a {@link CommException} at
     * {@code where} naming the Weft op, the NCCL function and NCCL's description of the error.
     */
    void check(int result, String function, String op, SourceLocation where) {
        if (result != SUCCESS) {
            throw new CommException(where, op + ": " + function + " failed: " + describe(result));
        }
    }

    /** {@code ncclGetErrorString(result)} with the enum's name and value: {@code "... (ncclInvalidArgument = 4)"}. */
    String describe(int result) {
        String name = result >= 0 && result < RESULT_NAMES.length ? RESULT_NAMES[result] : "ncclResult_t";
        try {
            MemorySegment text = (MemorySegment) getErrorString.invokeExact(result);
            String s = text.equals(MemorySegment.NULL) ? "unknown error" : text.reinterpret(4096).getString(0);
            return s + " (" + name + " = " + result + ")";
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ncclGetUniqueId} into {@code id} ({@link #UNIQUE_ID_BYTES} bytes). */
    int getUniqueId(MemorySegment id) {
        try {
            return (int) getUniqueId.invokeExact(id);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ncclCommInitRank(comm, nranks, id, rank)}: {@code id} is passed by value; the handle goes to {@code comm}. */
    int commInitRank(MemorySegment comm, int nranks, MemorySegment id, int rank) {
        try {
            return (int) commInitRank.invokeExact(comm, nranks, id, rank);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commDestroy(long comm) {
        try {
            return (int) commDestroy.invokeExact(comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commAbort(long comm) {
        try {
            return (int) commAbort.invokeExact(comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commGetAsyncError(long comm, MemorySegment error) {
        try {
            return (int) commGetAsyncError.invokeExact(comm, error);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int allReduce(long send, long recv, long count, int datatype, int op, long comm, long stream) {
        try {
            return (int) allReduce.invokeExact(send, recv, count, datatype, op, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int allGather(long send, long recv, long sendCount, int datatype, long comm, long stream) {
        try {
            return (int) allGather.invokeExact(send, recv, sendCount, datatype, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int reduceScatter(long send, long recv, long recvCount, int datatype, int op, long comm, long stream) {
        try {
            return (int) reduceScatter.invokeExact(send, recv, recvCount, datatype, op, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int broadcast(long send, long recv, long count, int datatype, int root, long comm, long stream) {
        try {
            return (int) broadcast.invokeExact(send, recv, count, datatype, root, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int reduce(long send, long recv, long count, int datatype, int op, int root, long comm, long stream) {
        try {
            return (int) reduce.invokeExact(send, recv, count, datatype, op, root, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int send(long buf, long count, int datatype, int peer, long comm, long stream) {
        try {
            return (int) send.invokeExact(buf, count, datatype, peer, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int recv(long buf, long count, int datatype, int peer, long comm, long stream) {
        try {
            return (int) recv.invokeExact(buf, count, datatype, peer, comm, stream);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int groupStart() {
        try {
            return (int) groupStart.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int groupEnd() {
        try {
            return (int) groupEnd.invokeExact();
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
