package dev.weft.backends.gpu.exec;

import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.PtxTarget;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * {@link CudaCalls} without a device, recording one line per call. Device memory is host memory at fake addresses
 * (buffer {@code i} at {@code (i + 1) << 32}); a stream's copies run when it is synchronised, as a real stream's
 * may run any time until then: a host read before the sync sees nothing, and an upload reads the host memory
 * only then. Kernels are recorded, not run. Tracks what is live: allocations, modules and streams. Thread-safe
 * (a cleaner thread may release).
 */
final class RecordingCuda implements CudaCalls {
    private final List<String> lines = new ArrayList<>();
    private final Map<Long, MemorySegment> memory = new LinkedHashMap<>();
    private final Map<Long, List<Runnable>> queues = new LinkedHashMap<>();
    private final Set<CUmodule> modules = Collections.newSetFromMap(new IdentityHashMap<>());
    private long nextBuffer;
    private long nextStream = 7000;

    /** {@link PtxTarget#DEFAULT}: modules are recorded, not compiled. */
    @Override
    public PtxTarget target() {
        return PtxTarget.DEFAULT;
    }

    @Override
    public synchronized void makeCurrent() {
        lines.add("current");
    }

    @Override
    public synchronized GpuStream newStream() {
        long handle = ++nextStream;
        queues.put(handle, new ArrayList<>());
        lines.add("stream create " + handle);
        return new GpuStream(new CUstream(), handle);
    }

    @Override
    public synchronized void destroyStream(GpuStream stream) {
        queue(stream);
        queues.remove(stream.handle());
        lines.add("stream destroy " + stream.handle());
    }

    @Override
    public synchronized CUmodule loadModule(String ptx) {
        CUmodule m = new CUmodule();
        modules.add(m);
        lines.add("module load");
        return m;
    }

    @Override
    public synchronized CUfunction function(CUmodule module, String name) {
        if (!modules.contains(module)) {
            throw new IllegalStateException("function " + name + " of a module not loaded");
        }
        return new CUfunction();
    }

    @Override
    public synchronized void unloadModule(CUmodule module) {
        if (!modules.remove(module)) {
            throw new IllegalStateException("module unloaded twice");
        }
        lines.add("module unload");
    }

    @Override
    public synchronized DeviceBuffer allocate(long bytes) {
        long address = ++nextBuffer << 32;
        memory.put(address, Arena.ofAuto().allocate(bytes));
        lines.add("alloc " + bytes + " -> " + address);
        return new DeviceBuffer(CudaHandles.pointer(address), address, bytes);
    }

    @Override
    public synchronized void free(DeviceBuffer buffer) {
        if (memory.remove(buffer.address()) == null) {
            throw new IllegalStateException("free of " + buffer.address() + ", which is not allocated");
        }
        lines.add("free " + buffer.address());
    }

    @Override
    public synchronized void copyToDevice(MemorySegment host, long dst, GpuStream stream) {
        checkPiece(host);
        lines.add("h2d " + host.byteSize() + " -> " + dst + " stream=" + stream.handle());
        queue(stream).add(() -> device(dst, host.byteSize()).copyFrom(host));
    }

    @Override
    public synchronized void copyToHost(long src, MemorySegment host, GpuStream stream) {
        checkPiece(host);
        lines.add("d2h " + src + " -> " + host.byteSize() + " stream=" + stream.handle());
        queue(stream).add(() -> host.copyFrom(device(src, host.byteSize())));
    }

    @Override
    public synchronized void copyOnDevice(long dst, long src, long bytes, GpuStream stream) {
        lines.add("d2d " + src + " -> " + dst + " " + bytes + " stream=" + stream.handle());
        queue(stream).add(() -> device(dst, bytes).copyFrom(device(src, bytes)));
    }

    @Override
    public synchronized void setWords(long dst, int value, long words, GpuStream stream) {
        lines.add("memset32 " + dst + " " + value + " x" + words + " stream=" + stream.handle());
        queue(stream).add(() -> {
            for (long w = 0; w < words; w++) {
                device(dst + 4 * w, 4).set(ValueLayout.JAVA_INT_UNALIGNED, 0, value);
            }
        });
    }

    @Override
    public synchronized void setBytes(long dst, byte value, long bytes, GpuStream stream) {
        lines.add("memset8 " + dst + " " + value + " x" + bytes + " stream=" + stream.handle());
        queue(stream).add(() -> device(dst, bytes).fill(value));
    }

    @Override
    public synchronized void launch(CUfunction function, Kernel kernel, Pointer params, GpuStream stream) {
        queue(stream);
        lines.add("launch " + kernel.name() + " stream=" + stream.handle());
    }

    @Override
    public synchronized void synchronize(GpuStream stream) {
        List<Runnable> q = queue(stream);
        q.forEach(Runnable::run);
        q.clear();
        lines.add("sync " + stream.handle());
    }

    /** Adds {@code line} to the record (for a test's own events, in order with the calls). */
    synchronized void note(String line) {
        lines.add(line);
    }

    /** Device allocations, modules and streams not yet released. */
    synchronized int live() {
        return memory.size() + modules.size() + queues.size();
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** JCuda passes host memory as a {@code ByteBuffer}, so one piece must be one. */
    private static void checkPiece(MemorySegment host) {
        if (host.byteSize() > HostCopies.CHUNK) {
            throw new IllegalArgumentException("a copy of " + host.byteSize() + " bytes in one piece");
        }
        host.asByteBuffer();
    }

    private List<Runnable> queue(GpuStream stream) {
        List<Runnable> q = queues.get(stream.handle());
        if (q == null) {
            throw new IllegalStateException("stream " + stream.handle() + " was not created here or was destroyed");
        }
        return q;
    }

    /** The device memory at {@code address}, {@code bytes} long, inside one allocation. */
    private MemorySegment device(long address, long bytes) {
        for (Map.Entry<Long, MemorySegment> e : memory.entrySet()) {
            long off = address - e.getKey();
            if (off >= 0 && off + bytes <= e.getValue().byteSize()) {
                return e.getValue().asSlice(off, bytes);
            }
        }
        throw new IllegalStateException(bytes + " bytes at " + address + " are not allocated device memory");
    }
}
