package dev.weft.backends.gpu.exec;

import dev.weft.spi.Setting;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.comm.Comm;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.spi.CommBindings;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.tracer.Executable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * Runs a lowered module on this rank's CUDA device ({@code rank % deviceCount}): the PTX generated for the
 * device's target ({@link CudaCalls#target}) is loaded once as one module; a {@link PlanRunner} walks the plan and
 * every kernel, copy, matmul and custom call is enqueued on one stream without host synchronisation, except that
 * a data-dependent {@code while} and an {@code if} read their rank-0 predicate back to the host (a one-byte copy
 * that waits for the stream) and each run waits for its results; a {@code Weft.fori} loop, whose trip count is
 * known, never waits ({@link #hostSynchronisations} counts the waits). Arguments are copied to the device and
 * results back per run, on the same stream ({@link HostCopies}); buffers come from a {@link BufferPool}; constants
 * are uploaded once. Custom calls and cuBLAS matmuls come from the {@link GpuExtension}s on the class path, which
 * get the executable's {@link GpuResources}. With {@code WEFT_DEBUG=1} the implementation each matmul dtype runs on
 * (cuBLAS or the PTX GEMM) is printed to stderr. Runs are serialised per executable.
 *
 * <p>Custom calls may batch their work (NCCL groups, see {@link GpuExtension#flush}): the executor flushes before a
 * step that reads one of their results, before a predicate is read, after each iteration of a {@code while} or
 * {@code Weft.fori} loop and at the end of each run, and reuses no buffer released in between until then.
 *
 * <p>The stream, the loaded modules and every pooled device buffer are released by {@link #close} (which the
 * compile cache calls when it evicts the executable), else when the executable becomes unreachable, else when the
 * JVM shuts down; a run after {@code close} fails.
 */
public final class GpuExecutable implements Executable, AutoCloseable {
    private static final boolean DEBUG = Setting.DEBUG.on();
    private static final Cleaner CLEANER = Cleaner.create();
    /** Device resources not yet released, for the shutdown hook. */
    private static final Set<Owned> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(GpuExecutable::releaseAtShutdown, "weft-gpu-release"));
    }

    /**
     * Releases what is still live, for at most two seconds: a release waits for the device, which may never be
     * free (a collective whose peer died), and the driver frees a process's memory when it exits anyway.
     */
    private static void releaseAtShutdown() {
        Thread releases = new Thread(() -> LIVE.forEach(Owned::releaseAtShutdown), "weft-gpu-release-work");
        releases.setDaemon(true);
        releases.start();
        try {
            releases.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final GpuPlan plan;
    private final PtxTarget target;
    private final TensorType[] argumentTypes;
    private final TensorType[] resultTypes;
    private final CudaCalls cuda;
    private final GpuStream stream;
    private final Owned owned;
    private final Cleaner.Cleanable cleanable;
    private final HostCopies copies;
    private final Map<Kernel, CUfunction> functions = new IdentityHashMap<>();
    private final BufferPool pool;
    private final Map<String, GpuCustomCallHandler> handlers = new HashMap<>();
    private final List<GpuExtension> extensions = new ArrayList<>();
    private final Optional<GpuMatmul> matmul;
    private final Map<GpuStep.Constant, DeviceBuffer> constants = new IdentityHashMap<>();
    private final Map<DeviceBuffer, Boolean> pinned = new IdentityHashMap<>();
    private final MemorySegment predicate = NativeMemory.allocate(1);
    /** Results of custom calls since the last {@link #flush}: their work may still be batched. */
    private final Set<DeviceBuffer> batched = Collections.newSetFromMap(new IdentityHashMap<>());
    private final PlanRunner runner;
    private boolean batchOpen;

    /**
     * Opens the device (failing with "target gpu needs an NVIDIA GPU and driver: ..." without one), plans the
     * module, loads its PTX and uploads its constants; its communication ops run on the communicators {@code comms}
     * binds.
     */
    public GpuExecutable(Module module, CommBindings comms) {
        this(module, comms, CudaDevice.open(Comm.world().rank()), ServiceLoader.load(GpuExtension.class));
    }

    /** The executable of {@code module} on the device behind {@code cuda}, with {@code extensions}. */
    GpuExecutable(Module module, CommBindings comms, CudaCalls cuda, Iterable<GpuExtension> extensions) {
        this.argumentTypes = tensorTypes(module.main().argumentTypes());
        this.resultTypes = tensorTypes(module.main().resultTypes());
        this.cuda = cuda;
        this.target = cuda.target();
        this.plan = GpuPlanner.plan(module, target);
        this.stream = cuda.newStream();
        this.pool = poolOn(cuda);
        this.runner = new PlanRunner(new Queue(), pool);
        this.owned = new Owned(cuda, stream, pool);
        LIVE.add(owned);
        this.cleanable = CLEANER.register(this, owned);
        this.copies = new HostCopies(cuda, stream);
        try {
            CUmodule cuModule = owned.load(plan.ptx());
            for (Kernel k : plan.kernels()) {
                functions.put(k, cuda.function(cuModule, k.name()));
            }
            GpuResources resources = new Resources();
            Optional<GpuMatmul> found = Optional.empty();
            for (GpuExtension e : extensions) {
                this.extensions.add(e);
                handlers.putAll(e.customCalls(module, comms, resources));
                if (found.isEmpty()) {
                    found = e.matmul(stream);
                }
            }
            this.matmul = found;
            prepare(plan.main());
            copies.synchronize();
        } catch (RuntimeException e) {
            cleanable.clean();
            throw e;
        }
        if (DEBUG) {
            Set<DType> dtypes = new LinkedHashSet<>();
            matmulDtypes(plan.main(), dtypes);
            for (DType t : dtypes) {
                System.err.print(String.format("r%d | gpu matmul %s: %s%n", Comm.world().rank(), t.specName(),
                        matmul.isPresent() && matmul.get().supports(t) ? matmul.get() : "PTX GEMM kernel"));
            }
        }
    }

    /** A pool of buffers from {@code cuda} (static: the pool must not refer to the executable, see {@link Owned}). */
    private static BufferPool poolOn(CudaCalls cuda) {
        return new BufferPool(new BufferPool.Allocator() {
            @Override
            public DeviceBuffer allocate(long bytes) {
                return cuda.allocate(bytes);
            }

            @Override
            public void free(DeviceBuffer buffer) {
                cuda.free(buffer);
            }
        });
    }

    /**
     * What an executable holds on the device, released once: by {@link #close}, by the cleaner once the
     * executable is unreachable, or by the shutdown hook. It must not refer to the executable. Runs hold
     * {@link #lock}, so a release waits for the run in progress.
     */
    private static final class Owned implements Runnable {
        final ReentrantLock lock = new ReentrantLock();
        final CudaCalls cuda;
        final GpuStream stream;
        final BufferPool pool;
        final List<CUmodule> modules = new ArrayList<>();
        boolean released;

        Owned(CudaCalls cuda, GpuStream stream, BufferPool pool) {
            this.cuda = cuda;
            this.stream = stream;
            this.pool = pool;
        }

        CUmodule load(String ptx) {
            CUmodule m = cuda.loadModule(ptx);
            modules.add(m);
            return m;
        }

        @Override
        public void run() {
            lock.lock();
            try {
                release();
            } finally {
                lock.unlock();
            }
        }

        /** Releases unless a run holds the lock (one in progress at exit may never end). */
        void releaseAtShutdown() {
            if (lock.tryLock()) {
                try {
                    release();
                } catch (RuntimeException e) {
                    // The driver frees a process's device memory when it exits.
                } finally {
                    lock.unlock();
                }
            }
        }

        private void release() {
            if (released) {
                return;
            }
            released = true;
            LIVE.remove(this);
            cuda.makeCurrent();
            cuda.synchronize(stream);
            pool.close();
            modules.forEach(cuda::unloadModule);
            modules.clear();
            cuda.destroyStream(stream);
        }
    }

    private static void matmulDtypes(BlockPlan b, Set<DType> out) {
        for (GpuStep s : b.steps()) {
            switch (s) {
                case GpuStep.Matmul m -> out.add(m.dtype());
                case GpuStep.While w -> {
                    matmulDtypes(w.cond(), out);
                    matmulDtypes(w.body(), out);
                }
                case GpuStep.Fori l -> matmulDtypes(l.body(), out);
                case GpuStep.If i -> {
                    matmulDtypes(i.onTrue(), out);
                    matmulDtypes(i.onFalse(), out);
                }
                default -> {
                }
            }
        }
    }

    private static TensorType[] tensorTypes(List<Type> types) {
        return types.stream().map(t -> t instanceof TensorType tt ? tt : null).toArray(TensorType[]::new);
    }

    /** Uploads constants and checks that every custom call has a handler. */
    private void prepare(BlockPlan b) {
        for (GpuStep s : b.steps()) {
            switch (s) {
                case GpuStep.Constant c -> {
                    DeviceBuffer buf = pool.take(c.data().byteSize());
                    copies.upload(c.data(), buf.address());
                    constants.put(c, buf);
                    pinned.put(buf, true);
                }
                case GpuStep.CustomCall c -> {
                    String target = c.op().attr("call_target_name") instanceof Attr.Str str ? str.value() : "";
                    if (!handlers.containsKey(target)) {
                        throw new WeftException(c.op().location(), "no GPU handler for custom call '" + target
                                + "' (handlers: " + handlers.keySet() + ")");
                    }
                }
                case GpuStep.While w -> {
                    prepare(w.cond());
                    prepare(w.body());
                }
                case GpuStep.Fori l -> prepare(l.body());
                case GpuStep.If i -> {
                    prepare(i.onTrue());
                    prepare(i.onFalse());
                }
                default -> {
                }
            }
        }
    }

    /**
     * Why this process cannot run the GPU target (the message of the error a {@code gpu} executable would raise),
     * or nothing when device 0 opens.
     */
    public static Optional<String> unavailableReason() {
        try {
            CudaDevice.open(0);
            return Optional.empty();
        } catch (WeftException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** The plan this executable runs. */
    public GpuPlan plan() {
        return plan;
    }

    /**
     * The times this executable has waited for its stream so far (every {@code cuStreamSynchronize}, all made
     * through {@link HostCopies#synchronize}): once when it was built (its constants uploaded), once per run for
     * its results, plus once per {@code while} round and per {@code if} for the predicate. A {@code Weft.fori}
     * loop adds none. The wait of {@link #close} is not counted.
     */
    public long hostSynchronisations() {
        owned.lock.lock();
        try {
            return copies.synchronisations();
        } finally {
            owned.lock.unlock();
        }
    }

    @Override
    public List<Tensor> run(List<Tensor> args) {
        if (args.size() != argumentTypes.length) {
            throw new WeftException(SourceLocation.capture(), "expected " + argumentTypes.length + " arguments, got "
                    + args.size());
        }
        owned.lock.lock();
        try {
            if (owned.released) {
                throw new WeftException(SourceLocation.capture(), "this GPU executable was closed");
            }
            return runLocked(args);
        } finally {
            owned.lock.unlock();
        }
    }

    private List<Tensor> runLocked(List<Tensor> args) {
        cuda.makeCurrent();
        GpuFrame f = new GpuFrame(plan.slots(), pool, pinned);
        BlockPlan main = plan.main();
        for (int i = 0; i < args.size(); i++) {
            MemorySegment data = argument(args.get(i), i);
            DeviceBuffer buf = pool.take(data.byteSize());
            copies.upload(data, buf.address());
            f.define(main.arguments()[i], buf);
        }
        try {
            runner.run(main, f);
            flush();
        } catch (RuntimeException e) {
            try {
                flush();
            } catch (RuntimeException s) {
                e.addSuppressed(s);
            }
            throw e;
        }
        List<Tensor> results = new ArrayList<>(resultTypes.length);
        List<MemorySegment> segments = new ArrayList<>();
        for (int i = 0; i < resultTypes.length; i++) {
            long bytes = resultTypes[i].byteSize();
            MemorySegment seg = NativeMemory.allocateUninitialized(bytes);
            copies.download(f.slots[main.results()[i]].address(), seg.asSlice(0, bytes));
            segments.add(seg);
        }
        copies.synchronize();
        PlanRunner.releaseResults(main, f);
        for (int i = 0; i < resultTypes.length; i++) {
            results.add(TensorAccess.concrete(resultTypes[i].aval(), segments.get(i)));
        }
        return results;
    }

    /**
     * Releases the stream, the modules and every device buffer now, after the work queued on the stream; later
     * runs fail. Idempotent.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    private MemorySegment argument(Tensor t, int i) {
        MemorySegment data = TensorAccess.data(t);
        if (data == null) {
            throw new TracedValueException(SourceLocation.capture(), "argument " + i + " is a traced tensor");
        }
        TensorType expected = argumentTypes[i];
        if (t.dtype() != expected.dtype()) {
            throw new DTypeException(SourceLocation.capture(), "argument " + i + " has dtype "
                    + t.dtype().specName() + ", expected " + expected.dtype().specName());
        }
        if (!Shape.of(t.shape()).equals(expected.shape())) {
            throw new ShapeException(SourceLocation.capture(), "argument " + i + " does not match " + expected.mlir());
        }
        return data;
    }

    private void launch(Kernel k, DeviceBuffer[] params) {
        flushIfReads(params);
        Pointer[] ptrs = new Pointer[params.length];
        for (int i = 0; i < params.length; i++) {
            ptrs[i] = Pointer.to(params[i].pointer());
        }
        cuda.launch(functions.get(k), k, Pointer.to(ptrs), stream);
    }

    private void matmul(GpuStep.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
        flushIfReads(new DeviceBuffer[] {a, b});
        if (matmul.isPresent() && matmul.get().supports(m.dtype())) {
            matmul.get().gemm(stream, m.dtype(), m.m(), m.n(), m.k(), a.address(), b.address(), c.address(),
                    m.batch());
        } else {
            launch(m.fallback(), new DeviceBuffer[] {a, b, c});
        }
    }

    private DeviceBuffer[] customCall(GpuStep.CustomCall c, DeviceBuffer[] operands) {
        DeviceBuffer[] results = new DeviceBuffer[c.results().length];
        for (int r = 0; r < results.length; r++) {
            if (c.results()[r] >= 0) {
                results[r] = pool.take(c.resultBytes()[r]);
            }
        }
        String name = ((Attr.Str) c.op().attr("call_target_name")).value();
        flushIfReads(operands);
        batchOpen = true;
        pool.pauseReuse();
        try {
            handlers.get(name).call(c.op(), operands, results, stream);
        } catch (WeftException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new WeftException(c.op().location(), name + " failed: " + e.getMessage(), e);
        }
        for (DeviceBuffer r : results) {
            if (r != null) {
                batched.add(r);
            }
        }
        return results;
    }

    /**
     * Has the extensions queue what their custom calls batched (see {@link GpuExtension#flush}), then lets the
     * pool reuse the buffers released meanwhile.
     */
    private void flush() {
        if (!batchOpen) {
            return;
        }
        batchOpen = false;
        batched.clear();
        for (GpuExtension e : extensions) {
            e.flush();
        }
        pool.resumeReuse();
    }

    /** Flushes before work that reads a result of a custom call that may still be batched. */
    private void flushIfReads(DeviceBuffer[] operands) {
        if (batchOpen) {
            for (DeviceBuffer b : operands) {
                if (b != null && batched.contains(b)) {
                    flush();
                    return;
                }
            }
        }
    }

    /**
     * Reads a rank-0 BOOL from the device: waits for everything enqueued before it ({@link PlanRunner} has
     * flushed what custom calls batched).
     */
    private boolean predicate(DeviceBuffer b) {
        copies.download(b.address(), predicate);
        copies.synchronize();
        return predicate.get(ValueLayout.JAVA_BYTE, 0) != 0;
    }

    /**
     * The plan-level operations {@link PlanRunner} asks of this executable, each turned into {@link CudaCalls} on
     * its stream (or handed to its matmul and custom call handlers).
     */
    private final class Queue implements PlanRunner.Device {
        @Override
        public DeviceBuffer constant(GpuStep.Constant c) {
            return constants.get(c);
        }

        @Override
        public void launch(Kernel kernel, DeviceBuffer[] params) {
            GpuExecutable.this.launch(kernel, params);
        }

        @Override
        public void matmul(GpuStep.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
            GpuExecutable.this.matmul(m, a, b, c);
        }

        @Override
        public DeviceBuffer[] customCall(GpuStep.CustomCall c, DeviceBuffer[] operands) {
            return GpuExecutable.this.customCall(c, operands);
        }

        @Override
        public void flush() {
            GpuExecutable.this.flush();
        }

        @Override
        public boolean predicate(DeviceBuffer b) {
            return GpuExecutable.this.predicate(b);
        }
    }

    /** The executable's stream, pool and kernel loading, as lent to its extensions. */
    private final class Resources implements GpuResources {
        @Override
        public GpuStream stream() {
            return stream;
        }

        @Override
        public DeviceBuffer take(long bytes) {
            return pool.take(bytes);
        }

        @Override
        public void give(DeviceBuffer buffer) {
            pool.give(buffer);
        }

        @Override
        public void copy(long dst, long src, long bytes) {
            cuda.copyOnDevice(dst, src, bytes, stream);
        }

        @Override
        public void upload(MemorySegment host, long dst) {
            copies.uploadValue(host, dst);
        }

        @Override
        public void launch(Kernel kernel, long... params) {
            CUfunction fn = functions.computeIfAbsent(kernel,
                    k -> cuda.function(owned.load(target.module(List.of(k))), k.name()));
            Pointer[] ptrs = new Pointer[params.length];
            for (int i = 0; i < params.length; i++) {
                ptrs[i] = Pointer.to(new long[] {params[i]});
            }
            cuda.launch(fn, kernel, Pointer.to(ptrs), stream);
        }
    }
}
