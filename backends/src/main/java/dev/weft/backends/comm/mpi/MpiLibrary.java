package dev.weft.backends.comm.mpi;

import dev.weft.spi.Setting;
import dev.weft.DType;
import dev.weft.comm.Comm;
import dev.weft.backends.ffi.Downcalls;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The MPI library of this process, bound through FFM: the one place that knows the ABI differences between
 * Open MPI ({@code libmpi.so.40}) and MPICH ({@code libmpich.so.12}, {@code libmpi.so.12}).
 *
 * <table>
 *   <caption>ABI differences</caption>
 *   <tr><th></th><th>Open MPI</th><th>MPICH</th></tr>
 *   <tr><td>{@code MPI_Comm}, {@code MPI_Datatype}, {@code MPI_Op}, {@code MPI_Request}, {@code MPI_Errhandler}</td>
 *       <td>pointers</td><td>32-bit ints</td></tr>
 *   <tr><td>predefined handles</td><td>addresses of exported globals ({@code ompi_mpi_comm_world}, ...)</td>
 *       <td>constants ({@code MPI_COMM_WORLD = 0x44000000}, ...)</td></tr>
 *   <tr><td>{@code sizeof(MPI_Status)}</td><td>24</td><td>20</td></tr>
 *   <tr><td>offsets of {@code MPI_SOURCE}, {@code MPI_TAG} in {@code MPI_Status}</td><td>0, 4</td>
 *       <td>8, 12 (after {@code count_lo}, {@code count_hi_and_cancelled})</td></tr>
 *   <tr><td>{@code MPI_ANY_SOURCE}, {@code MPI_PROC_NULL}</td><td>-1, -2</td><td>-2, -1</td></tr>
 *   <tr><td>{@code MPI_IN_PLACE}</td><td>{@code (void *) 1}</td><td>{@code (void *) -1}</td></tr>
 *   <tr><td>{@code MPI_ERR_TRUNCATE}</td><td>15</td><td>14</td></tr>
 * </table>
 *
 * <p>{@code MPI_ANY_TAG} is -1 in both. Weft's own wildcards ({@code Comm.ANY_SOURCE}, {@code Comm.ANY_TAG}) are
 * translated here ({@link #source}, {@link #tag}), and a status is read here ({@link #statusSource},
 * {@link #statusTag}).
 *
 * <p>Every handle is a Java {@code long} here: the pointer for Open MPI, the unsigned int for MPICH. The methods
 * are the MPI functions of the same name, returning MPI's error code; they do not check it.
 *
 * <p>Which library: the one named by the environment variable {@value #LIBRARY_ENV} (a file name or path) if set;
 * otherwise, under an MPICH launcher ({@code PMI_SIZE} set, no {@code OMPI_COMM_WORLD_SIZE}) MPICH first, else
 * Open MPI first. The library is opened {@code RTLD_GLOBAL} because Open MPI's plugins resolve symbols of
 * {@code libmpi} through the global namespace. The flavor follows from the exported symbols and must agree with
 * {@code MPI_Get_library_version}. Data types: {@code F32 F64 I32 I64 BOOL} are {@code MPI_FLOAT MPI_DOUBLE
 * MPI_INT MPI_INT64_T MPI_INT8_T}.
 */
final class MpiLibrary {
    /** Environment variable naming the MPI library to load, overriding the search. */
    static final String LIBRARY_ENV = "WEFT_MPI_LIB";
    static final int UNDEFINED = -32766;
    static final int SUCCESS = 0;
    /** {@code MPI_ANY_TAG}, the same in both libraries. */
    private static final int ANY_TAG = -1;

    enum Flavor { OPEN_MPI, MPICH }

    private static final List<String> OPEN_MPI_NAMES = List.of("libmpi.so.40");
    private static final List<String> MPICH_NAMES = List.of("libmpich.so.12", "libmpi.so.12");
    private static final int RTLD_NOW = 0x2;
    private static final int RTLD_GLOBAL = 0x100;
    private static final int VERSION_CHARS = 8192;
    /** Stands for the library's handle layout in the descriptors below. */
    private static final ValueLayout HANDLE = ValueLayout.JAVA_LONG.withName("handle");

    final Flavor flavor;
    final String file;
    final String version;
    final long statusBytes;
    /** The library's {@code MPI_ANY_SOURCE}. */
    private final int anySource;
    /** Where {@code MPI_SOURCE} and {@code MPI_TAG} lie in an {@code MPI_Status}. */
    private final long statusSourceOffset;
    private final long statusTagOffset;
    final long commWorld;
    final long errorsReturn;
    final long sum;
    final long prod;
    final long min;
    final long max;
    final MemorySegment inPlace;
    private final Map<DType, Long> datatypes = new EnumMap<>(DType.class);
    private final ValueLayout handleLayout;
    private final SymbolLookup symbols;
    /** Every function of {@link #fn}, in the order bound. */
    private final List<Fn> functions = new ArrayList<>();

    private final Fn getLibraryVersion;
    private final Fn initialized;
    private final Fn finalized;
    private final Fn initThread;
    private final Fn finalizeFn;
    private final Fn abort;
    private final Fn errorString;
    private final Fn errorClass;
    private final Fn commSetErrhandler;
    private final Fn commRank;
    private final Fn commSize;
    private final Fn commSplit;
    private final Fn commDup;
    private final Fn commFree;
    private final Fn barrier;
    private final Fn send;
    private final Fn recv;
    private final Fn isend;
    private final Fn irecv;
    private final Fn waitFn;
    private final Fn getCount;
    private final Fn sendrecv;
    private final Fn allreduce;
    private final Fn allgather;
    private final Fn allgatherv;
    private final Fn gatherv;
    private final Fn scatterv;
    private final Fn alltoallv;
    private final Fn reduceScatterBlock;
    private final Fn bcast;
    private final Fn reduce;
    private final Fn alltoall;
    private final Fn opCreate;
    private final Fn opFree;
    private final Fn iallreduce;
    private final Fn iallgather;
    private final Fn ireduceScatterBlock;
    private final Fn ibcast;
    private final Fn ialltoall;
    private final Fn ibarrier;
    private final Fn test;

    private MpiLibrary(String file, SymbolLookup symbols) {
        this.file = file;
        this.symbols = symbols;
        this.flavor = symbols.find("ompi_mpi_comm_world").isPresent() ? Flavor.OPEN_MPI : Flavor.MPICH;
        this.handleLayout = flavor == Flavor.OPEN_MPI ? ADDRESS : JAVA_INT;
        getLibraryVersion = fn("MPI_Get_library_version", ADDRESS, ADDRESS);
        initialized = fn("MPI_Initialized", ADDRESS);
        finalized = fn("MPI_Finalized", ADDRESS);
        initThread = fn("MPI_Init_thread", ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
        finalizeFn = fn("MPI_Finalize");
        abort = fn("MPI_Abort", HANDLE, JAVA_INT);
        errorString = fn("MPI_Error_string", JAVA_INT, ADDRESS, ADDRESS);
        errorClass = fn("MPI_Error_class", JAVA_INT, ADDRESS);
        commSetErrhandler = fn("MPI_Comm_set_errhandler", HANDLE, HANDLE);
        commRank = fn("MPI_Comm_rank", HANDLE, ADDRESS);
        commSize = fn("MPI_Comm_size", HANDLE, ADDRESS);
        commSplit = fn("MPI_Comm_split", HANDLE, JAVA_INT, JAVA_INT, ADDRESS);
        commDup = fn("MPI_Comm_dup", HANDLE, ADDRESS);
        commFree = fn("MPI_Comm_free", ADDRESS);
        barrier = fn("MPI_Barrier", HANDLE);
        send = fn("MPI_Send", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT, HANDLE);
        recv = fn("MPI_Recv", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT, HANDLE, ADDRESS);
        isend = fn("MPI_Isend", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT, HANDLE, ADDRESS);
        irecv = fn("MPI_Irecv", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT, HANDLE, ADDRESS);
        waitFn = fn("MPI_Wait", ADDRESS, ADDRESS);
        getCount = fn("MPI_Get_count", ADDRESS, HANDLE, ADDRESS);
        sendrecv = fn("MPI_Sendrecv", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT,
                ADDRESS, JAVA_INT, HANDLE, JAVA_INT, JAVA_INT, HANDLE, ADDRESS);
        allreduce = fn("MPI_Allreduce", ADDRESS, ADDRESS, JAVA_INT, HANDLE, HANDLE, HANDLE);
        allgather = fn("MPI_Allgather", ADDRESS, JAVA_INT, HANDLE, ADDRESS, JAVA_INT, HANDLE, HANDLE);
        allgatherv = fn("MPI_Allgatherv", ADDRESS, JAVA_INT, HANDLE, ADDRESS, ADDRESS, ADDRESS, HANDLE, HANDLE);
        gatherv = fn("MPI_Gatherv", ADDRESS, JAVA_INT, HANDLE, ADDRESS, ADDRESS, ADDRESS, HANDLE, JAVA_INT, HANDLE);
        scatterv = fn("MPI_Scatterv", ADDRESS, ADDRESS, ADDRESS, HANDLE, ADDRESS, JAVA_INT, HANDLE, JAVA_INT, HANDLE);
        alltoallv = fn("MPI_Alltoallv", ADDRESS, ADDRESS, ADDRESS, HANDLE, ADDRESS, ADDRESS, ADDRESS, HANDLE, HANDLE);
        reduceScatterBlock = fn("MPI_Reduce_scatter_block", ADDRESS, ADDRESS, JAVA_INT, HANDLE, HANDLE, HANDLE);
        bcast = fn("MPI_Bcast", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, HANDLE);
        reduce = fn("MPI_Reduce", ADDRESS, ADDRESS, JAVA_INT, HANDLE, HANDLE, JAVA_INT, HANDLE);
        alltoall = fn("MPI_Alltoall", ADDRESS, JAVA_INT, HANDLE, ADDRESS, JAVA_INT, HANDLE, HANDLE);
        opCreate = fn("MPI_Op_create", ADDRESS, JAVA_INT, ADDRESS);
        opFree = fn("MPI_Op_free", ADDRESS);
        iallreduce = fn("MPI_Iallreduce", ADDRESS, ADDRESS, JAVA_INT, HANDLE, HANDLE, HANDLE, ADDRESS);
        iallgather = fn("MPI_Iallgather", ADDRESS, JAVA_INT, HANDLE, ADDRESS, JAVA_INT, HANDLE, HANDLE, ADDRESS);
        ireduceScatterBlock = fn("MPI_Ireduce_scatter_block", ADDRESS, ADDRESS, JAVA_INT, HANDLE, HANDLE, HANDLE,
                ADDRESS);
        ibcast = fn("MPI_Ibcast", ADDRESS, JAVA_INT, HANDLE, JAVA_INT, HANDLE, ADDRESS);
        ialltoall = fn("MPI_Ialltoall", ADDRESS, JAVA_INT, HANDLE, ADDRESS, JAVA_INT, HANDLE, HANDLE, ADDRESS);
        ibarrier = fn("MPI_Ibarrier", HANDLE, ADDRESS);
        test = fn("MPI_Test", ADDRESS, ADDRESS, ADDRESS);

        if (flavor == Flavor.OPEN_MPI) {
            statusBytes = 24;
            anySource = -1;
            statusSourceOffset = 0;
            statusTagOffset = 4;
            inPlace = MemorySegment.ofAddress(1);
            commWorld = global("ompi_mpi_comm_world");
            errorsReturn = global("ompi_mpi_errors_return");
            sum = global("ompi_mpi_op_sum");
            prod = global("ompi_mpi_op_prod");
            min = global("ompi_mpi_op_min");
            max = global("ompi_mpi_op_max");
            datatypes.put(DType.F32, global("ompi_mpi_float"));
            datatypes.put(DType.F64, global("ompi_mpi_double"));
            datatypes.put(DType.I32, global("ompi_mpi_int"));
            datatypes.put(DType.I64, global("ompi_mpi_int64_t"));
            datatypes.put(DType.BOOL, global("ompi_mpi_int8_t"));
        } else {
            statusBytes = 20;
            anySource = -2;
            statusSourceOffset = 8;
            statusTagOffset = 12;
            inPlace = MemorySegment.ofAddress(-1);
            commWorld = 0x44000000L;
            errorsReturn = 0x54000001L;
            max = 0x58000001L;
            min = 0x58000002L;
            sum = 0x58000003L;
            prod = 0x58000004L;
            datatypes.put(DType.F32, 0x4c00040aL);
            datatypes.put(DType.F64, 0x4c00080bL);
            datatypes.put(DType.I32, 0x4c000405L);
            datatypes.put(DType.I64, 0x4c00083aL);
            datatypes.put(DType.BOOL, 0x4c000137L);
        }
        this.version = libraryVersion();
        if ((flavor == Flavor.OPEN_MPI) != version.contains("Open MPI")) {
            throw new IllegalStateException(file + " has the " + flavor + " ABI but reports version '" + version + "'");
        }
    }

    /**
     * Opens the MPI library (see the class comment); fails naming every library tried. A process loads one
     * library, once: the per-message functions are constants of that library ({@link Hot}).
     */
    static synchronized MpiLibrary load() {
        if (loaded != null) {
            return loaded;
        }
        String override = Setting.MPI_LIB.text();
        List<String> names = new ArrayList<>();
        if (override != null) {
            names.add(override);
        } else if (System.getenv("PMI_SIZE") != null && System.getenv("OMPI_COMM_WORLD_SIZE") == null) {
            names.addAll(MPICH_NAMES);
            names.addAll(OPEN_MPI_NAMES);
        } else {
            names.addAll(OPEN_MPI_NAMES);
            names.addAll(MPICH_NAMES);
        }
        List<String> errors = new ArrayList<>();
        MpiEnvironment.prepare();
        for (String name : names) {
            String error = openGlobal(name);
            if (error == null) {
                loaded = new MpiLibrary(name, SymbolLookup.libraryLookup(name, Arena.global()));
                return loaded;
            }
            errors.add(error);
        }
        throw new IllegalStateException("no MPI library could be loaded: " + String.join("; ", errors)
                + " (install Open MPI or MPICH, or set " + LIBRARY_ENV + ")");
    }

    /** {@code dlopen(name, RTLD_NOW | RTLD_GLOBAL)}; returns null on success, else {@code dlerror()}. */
    private static String openGlobal(String name) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        MethodHandle dlopen = linker.downcallHandle(libc.findOrThrow("dlopen"),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        MethodHandle dlerror = linker.downcallHandle(libc.findOrThrow("dlerror"), FunctionDescriptor.of(ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(name), RTLD_NOW | RTLD_GLOBAL);
            if (!handle.equals(MemorySegment.NULL)) {
                return null;
            }
            MemorySegment message = (MemorySegment) dlerror.invokeExact();
            return message.equals(MemorySegment.NULL) ? name + ": not found" : message.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** The source to pass MPI for Weft's {@code src}: a rank, or this library's {@code MPI_ANY_SOURCE}. */
    int source(int src) {
        return src == Comm.ANY_SOURCE ? anySource : src;
    }

    /** The tag to pass MPI for Weft's {@code tag}: {@code MPI_ANY_TAG} is -1, Weft's {@code ANY_TAG}, in both. */
    int tag(int tag) {
        return tag == Comm.ANY_TAG ? ANY_TAG : tag;
    }

    /** {@code MPI_SOURCE} of a completed receive's {@code status}. */
    int statusSource(MemorySegment status) {
        return status.get(JAVA_INT, statusSourceOffset);
    }

    /** {@code MPI_TAG} of a completed receive's {@code status}. */
    int statusTag(MemorySegment status) {
        return status.get(JAVA_INT, statusTagOffset);
    }

    /** The MPI handle of the datatype of {@code dtype}. */
    long datatype(DType dtype) {
        return datatypes.get(dtype);
    }

    /** The dtype whose MPI datatype is {@code handle}, or null for any other datatype. */
    DType dtypeOf(long handle) {
        for (Map.Entry<DType, Long> e : datatypes.entrySet()) {
            if (e.getValue() == handle) {
                return e.getKey();
            }
        }
        return null;
    }

    /** Bytes of one handle in memory ({@code MPI_Comm *}, {@code MPI_Request *} and the like point to one). */
    long handleBytes() {
        return handleLayout.byteSize();
    }

    /** Reads the handle stored at {@code cell}. */
    long readHandle(MemorySegment cell) {
        return flavor == Flavor.OPEN_MPI
                ? cell.reinterpret(8).get(ValueLayout.JAVA_LONG, 0)
                : Integer.toUnsignedLong(cell.reinterpret(4).get(JAVA_INT, 0));
    }

    /** Writes {@code handle} at {@code cell}. */
    void writeHandle(MemorySegment cell, long handle) {
        if (flavor == Flavor.OPEN_MPI) {
            cell.set(ValueLayout.JAVA_LONG, 0, handle);
        } else {
            cell.set(JAVA_INT, 0, (int) handle);
        }
    }

    /** The layout of an {@code MPI_User_function}'s arguments: (invec, inoutvec, int *len, MPI_Datatype *type). */
    static FunctionDescriptor userFunction() {
        return FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    }

    private String libraryVersion() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(VERSION_CHARS);
            MemorySegment len = arena.allocate(JAVA_INT);
            int rc = (int) getLibraryVersion.get().invokeExact(text, len);
            if (rc != SUCCESS) {
                throw new IllegalStateException(file + ": MPI_Get_library_version failed with code " + rc);
            }
            return text.getString(0).strip();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Whether error {@code code} is of class {@code MPI_ERR_TRUNCATE}: a message longer than its receive. */
    boolean truncated(int code) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cls = arena.allocate(JAVA_INT);
            int rc = (int) errorClass.get().invokeExact(code, cls);
            return rc == SUCCESS && cls.get(JAVA_INT, 0) == (flavor == Flavor.OPEN_MPI ? 15 : 14);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code MPI_Error_string}, or a plain description when the library cannot describe {@code code}. */
    String errorString(int code) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(1024);
            MemorySegment len = arena.allocate(JAVA_INT);
            int rc = (int) errorString.get().invokeExact(code, text, len);
            return rc == SUCCESS ? text.getString(0) : "MPI error code " + code;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    boolean initialized() {
        return flag(initialized.get());
    }

    boolean finalized() {
        return flag(finalized.get());
    }

    private static boolean flag(MethodHandle query) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment flag = arena.allocate(JAVA_INT);
            int rc = (int) query.invokeExact(flag);
            return rc == SUCCESS && flag.get(JAVA_INT, 0) != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int initThread(int required, MemorySegment provided) {
        try {
            return (int) initThread.get().invokeExact(MemorySegment.NULL, MemorySegment.NULL, required, provided);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int finalizeMpi() {
        try {
            return (int) finalizeFn.get().invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int abort(long comm, int code) {
        try {
            return (int) abort.get().invokeExact(comm, code);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commSetErrhandler(long comm, long errhandler) {
        try {
            return (int) commSetErrhandler.get().invokeExact(comm, errhandler);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commRank(long comm, MemorySegment rank) {
        try {
            return (int) commRank.get().invokeExact(comm, rank);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commSize(long comm, MemorySegment size) {
        try {
            return (int) commSize.get().invokeExact(comm, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commSplit(long comm, int color, int key, MemorySegment newComm) {
        try {
            return (int) commSplit.get().invokeExact(comm, color, key, newComm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commDup(long comm, MemorySegment newComm) {
        try {
            return (int) commDup.get().invokeExact(comm, newComm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int commFree(MemorySegment comm) {
        try {
            return (int) commFree.get().invokeExact(comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int barrier(long comm) {
        try {
            return (int) HotBarrier.MH.invokeExact(comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int send(MemorySegment buf, int count, long datatype, int dest, int tag, long comm) {
        try {
            return (int) HotSend.MH.invokeExact(buf, count, datatype, dest, tag, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int recv(MemorySegment buf, int count, long datatype, int src, int tag, long comm, MemorySegment status) {
        try {
            return (int) HotRecv.MH.invokeExact(buf, count, datatype, src, tag, comm, status);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int isend(MemorySegment buf, int count, long datatype, int dest, int tag, long comm, MemorySegment request) {
        try {
            return (int) HotIsend.MH.invokeExact(buf, count, datatype, dest, tag, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int irecv(MemorySegment buf, int count, long datatype, int src, int tag, long comm, MemorySegment request) {
        try {
            return (int) HotIrecv.MH.invokeExact(buf, count, datatype, src, tag, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int waitRequest(MemorySegment request, MemorySegment status) {
        try {
            return (int) HotWaitFn.MH.invokeExact(request, status);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int getCount(MemorySegment status, long datatype, MemorySegment count) {
        try {
            return (int) getCount.get().invokeExact(status, datatype, count);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int sendrecv(MemorySegment sendbuf, int sendcount, long sendtype, int dest, int sendtag,
                 MemorySegment recvbuf, int recvcount, long recvtype, int src, int recvtag, long comm,
                 MemorySegment status) {
        try {
            return (int) HotSendrecv.MH.invokeExact(sendbuf, sendcount, sendtype, dest, sendtag,
                    recvbuf, recvcount, recvtype, src, recvtag, comm, status);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int allreduce(MemorySegment in, MemorySegment out, int count, long datatype, long op, long comm) {
        try {
            return (int) HotAllreduce.MH.invokeExact(in, out, count, datatype, op, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int allgather(MemorySegment in, int count, long datatype, MemorySegment out, long comm) {
        try {
            return (int) HotAllgather.MH.invokeExact(in, count, datatype, out, count, datatype, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code MPI_Allgatherv}: {@code recvcounts} and {@code displs} are C int arrays of one entry per rank, in
     * elements of {@code datatype} (the same in both ABIs).
     */
    int allgatherv(MemorySegment in, int count, long datatype, MemorySegment out, MemorySegment recvcounts,
                   MemorySegment displs, long comm) {
        try {
            return (int) allgatherv.get().invokeExact(in, count, datatype, out, recvcounts, displs, datatype, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code MPI_Gatherv}: {@code recvcounts} and {@code displs} as in {@link #allgatherv}, read at the root only. */
    int gatherv(MemorySegment in, int count, long datatype, MemorySegment out, MemorySegment recvcounts,
                MemorySegment displs, int root, long comm) {
        try {
            return (int) gatherv.get().invokeExact(in, count, datatype, out, recvcounts, displs, datatype, root, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code MPI_Scatterv}: {@code sendcounts} and {@code displs} as in {@link #allgatherv}, read at the root only. */
    int scatterv(MemorySegment in, MemorySegment sendcounts, MemorySegment displs, long datatype, MemorySegment out,
                 int count, int root, long comm) {
        try {
            return (int) scatterv.get().invokeExact(in, sendcounts, displs, datatype, out, count, datatype, root, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code MPI_Alltoallv}: the counts and displacements as in {@link #allgatherv}. */
    int alltoallv(MemorySegment in, MemorySegment sendcounts, MemorySegment sdispls, long datatype, MemorySegment out,
                  MemorySegment recvcounts, MemorySegment rdispls, long comm) {
        try {
            return (int) alltoallv.get().invokeExact(in, sendcounts, sdispls, datatype, out, recvcounts, rdispls,
                    datatype, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int reduceScatterBlock(MemorySegment in, MemorySegment out, int count, long datatype, long op, long comm) {
        try {
            return (int) HotReduceScatterBlock.MH.invokeExact(in, out, count, datatype, op, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int bcast(MemorySegment buf, int count, long datatype, int root, long comm) {
        try {
            return (int) HotBcast.MH.invokeExact(buf, count, datatype, root, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int reduce(MemorySegment in, MemorySegment out, int count, long datatype, long op, int root, long comm) {
        try {
            return (int) HotReduce.MH.invokeExact(in, out, count, datatype, op, root, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int alltoall(MemorySegment in, int count, long datatype, MemorySegment out, long comm) {
        try {
            return (int) HotAlltoall.MH.invokeExact(in, count, datatype, out, count, datatype, comm);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int opCreate(MemorySegment function, boolean commute, MemorySegment op) {
        try {
            return (int) opCreate.get().invokeExact(function, commute ? 1 : 0, op);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int opFree(MemorySegment op) {
        try {
            return (int) opFree.get().invokeExact(op);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int iallreduce(MemorySegment in, MemorySegment out, int count, long datatype, long op, long comm,
                   MemorySegment request) {
        try {
            return (int) iallreduce.get().invokeExact(in, out, count, datatype, op, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int iallgather(MemorySegment in, int count, long datatype, MemorySegment out, long comm, MemorySegment request) {
        try {
            return (int) iallgather.get().invokeExact(in, count, datatype, out, count, datatype, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int ireduceScatterBlock(MemorySegment in, MemorySegment out, int count, long datatype, long op, long comm,
                            MemorySegment request) {
        try {
            return (int) ireduceScatterBlock.get().invokeExact(in, out, count, datatype, op, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int ibcast(MemorySegment buf, int count, long datatype, int root, long comm, MemorySegment request) {
        try {
            return (int) ibcast.get().invokeExact(buf, count, datatype, root, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int ialltoall(MemorySegment in, int count, long datatype, MemorySegment out, long comm, MemorySegment request) {
        try {
            return (int) ialltoall.get().invokeExact(in, count, datatype, out, count, datatype, comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int ibarrier(long comm, MemorySegment request) {
        try {
            return (int) ibarrier.get().invokeExact(comm, request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code MPI_Test(request, flag, status)}: completes the request if it is done, without blocking. */
    int test(MemorySegment request, MemorySegment flag, MemorySegment status) {
        try {
            return (int) HotTest.MH.invokeExact(request, flag, status);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** MPI function {@code name}, which the library must export (a missing one fails here, not at its call). */
    private Fn fn(String name, MemoryLayout... args) {
        symbols.findOrThrow(name);
        Fn f = new Fn(name, args);
        functions.add(f);
        return f;
    }

    /** The MPI functions linked so far, by name. */
    List<String> linked() {
        return functions.stream().filter(Fn::isLinked).map(f -> f.name).toList();
    }

    /**
     * An MPI function returning {@code int}, found when the library is opened and linked on its first call:
     * linking a downcall spins classes (all 29 took ~150 ms of a rank's start here), and a program calls a few.
     * Each {@link #HANDLE} argument is taken as a {@code long}: passed as it is where handles are pointers
     * (Open MPI; a pointer and a {@code long} travel alike in the 64-bit C calling conventions the JDK links), so
     * that no call wraps its handles in segments, and narrowed to the {@code int} they are elsewhere (MPICH).
     */
    private final class Fn {
        private final String name;
        private final MemoryLayout[] args;
        private volatile MethodHandle handle;

        Fn(String name, MemoryLayout[] args) {
            this.name = name;
            this.args = args;
        }

        MethodHandle get() {
            MethodHandle h = handle;
            if (h == null) {
                synchronized (this) {
                    h = handle;
                    if (h == null) {
                        h = link();
                        handle = h;
                    }
                }
            }
            return h;
        }

        boolean isLinked() {
            return handle != null;
        }

        private MethodHandle link() {
            MemoryLayout[] real = args.clone();
            List<Integer> handles = new ArrayList<>();
            for (int i = 0; i < real.length; i++) {
                if (real[i] == HANDLE) {
                    real[i] = handleLayout instanceof AddressLayout ? JAVA_LONG : handleLayout;
                    handles.add(i);
                }
            }
            MethodHandle mh = Downcalls.intFunction(symbols, name, real);
            if (!(handleLayout instanceof AddressLayout)) {
                for (int i : handles) {
                    mh = MethodHandles.filterArguments(mh, i, INT_OF_LONG);
                }
            }
            return mh;
        }
    }

    private long global(String symbol) {
        return symbols.findOrThrow(symbol).address();
    }

    private static final MethodHandle INT_OF_LONG = MethodHandles.explicitCastArguments(
            MethodHandles.identity(int.class), MethodType.methodType(int.class, long.class));

    /** The library {@link #load} opened; null before. */
    private static MpiLibrary loaded;

    /**
     * The per-message functions of the loaded library as static constants, one class each, linked on the first
     * call (after {@link #load}): C2 inlines a downcall through a constant method handle into its caller, but not
     * one read from an instance field, which costs an indirect call through the handle's lambda forms on every
     * message.
     */
    private static final class HotBarrier {
        static final MethodHandle MH = loaded.barrier.get();
    }

    private static final class HotSend {
        static final MethodHandle MH = loaded.send.get();
    }

    private static final class HotRecv {
        static final MethodHandle MH = loaded.recv.get();
    }

    private static final class HotIsend {
        static final MethodHandle MH = loaded.isend.get();
    }

    private static final class HotIrecv {
        static final MethodHandle MH = loaded.irecv.get();
    }

    private static final class HotWaitFn {
        static final MethodHandle MH = loaded.waitFn.get();
    }

    private static final class HotSendrecv {
        static final MethodHandle MH = loaded.sendrecv.get();
    }

    private static final class HotAllreduce {
        static final MethodHandle MH = loaded.allreduce.get();
    }

    private static final class HotAllgather {
        static final MethodHandle MH = loaded.allgather.get();
    }

    private static final class HotReduceScatterBlock {
        static final MethodHandle MH = loaded.reduceScatterBlock.get();
    }

    private static final class HotBcast {
        static final MethodHandle MH = loaded.bcast.get();
    }

    private static final class HotReduce {
        static final MethodHandle MH = loaded.reduce.get();
    }

    private static final class HotAlltoall {
        static final MethodHandle MH = loaded.alltoall.get();
    }

    private static final class HotTest {
        static final MethodHandle MH = loaded.test.get();
    }

    @Override
    public String toString() {
        return file + " (" + version.lines().findFirst().orElse(version) + ")";
    }
}
