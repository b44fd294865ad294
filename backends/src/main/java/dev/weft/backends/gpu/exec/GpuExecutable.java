package dev.weft.backends.gpu.exec;

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
import dev.weft.spi.NativeMemory;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.tracer.Executable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * Runs a lowered module on this rank's CUDA device ({@code rank % deviceCount}): the generated PTX is loaded once
 * as one module; every kernel, copy, matmul and custom call is enqueued on one stream without host synchronisation,
 * except that a data-dependent {@code while} and an {@code if} read their rank-0 predicate back to the host (a
 * one-byte copy that waits for the stream) and each run waits for its results; a {@code Weft.fori} loop, whose
 * trip count is known, never waits ({@link #hostSynchronisations} counts the waits). Arguments are copied to the
 * device and results back per run; buffers come from a {@link BufferPool}; constants are uploaded once. Custom
 * calls and cuBLAS matmuls come from the {@link GpuExtension}s on the class path, which get the executable's
 * {@link GpuResources}. With {@code WEFT_DEBUG=1} the implementation each matmul dtype runs on (cuBLAS or the PTX
 * GEMM) is printed to stderr. Runs are serialised per executable.
 */
public final class GpuExecutable implements Executable {
    private static final boolean DEBUG = "1".equals(System.getenv("WEFT_DEBUG"));

    private final GpuPlan plan;
    private final PtxTarget target;
    private final TensorType[] argumentTypes;
    private final TensorType[] resultTypes;
    private final CudaDevice device;
    private final GpuStream stream;
    private final Map<Kernel, CUfunction> functions = new IdentityHashMap<>();
    private final BufferPool pool = new BufferPool(new BufferPool.Allocator() {
        @Override
        public DeviceBuffer allocate(long bytes) {
            return CudaDevice.allocate(bytes);
        }

        @Override
        public void free(DeviceBuffer buffer) {
            CudaDevice.free(buffer);
        }
    });
    private final Map<String, GpuCustomCallHandler> handlers = new HashMap<>();
    private final Optional<GpuMatmul> matmul;
    private final Map<Step.Constant, DeviceBuffer> constants = new IdentityHashMap<>();
    private final Map<DeviceBuffer, Boolean> pinned = new IdentityHashMap<>();
    private final MemorySegment predicate = NativeMemory.allocate(1);
    private final PlanRunner runner = new PlanRunner(new Queue(), pool);
    private long hostSynchronisations;

    /**
     * Opens the device (failing with "target gpu needs an NVIDIA GPU and driver: ..." without one), plans the
     * module, loads its PTX and uploads its constants.
     */
    public GpuExecutable(Module module) {
        this.argumentTypes = tensorTypes(module.main().argumentTypes());
        this.resultTypes = tensorTypes(module.main().resultTypes());
        this.device = CudaDevice.open(Comm.world().rank());
        this.target = device.target();
        this.plan = GpuPlanner.plan(module, target);
        this.stream = device.newStream();
        CUmodule cuModule = PtxModules.load(plan.ptx());
        for (Kernel k : plan.kernels()) {
            functions.put(k, function(cuModule, k));
        }
        GpuResources resources = new Resources();
        Optional<GpuMatmul> found = Optional.empty();
        for (GpuExtension e : ServiceLoader.load(GpuExtension.class)) {
            handlers.putAll(e.customCalls(module, resources));
            if (found.isEmpty()) {
                found = e.matmul(stream);
            }
        }
        this.matmul = found;
        prepare(plan.main());
        if (DEBUG) {
            Set<DType> dtypes = new LinkedHashSet<>();
            matmulDtypes(plan.main(), dtypes);
            for (DType t : dtypes) {
                System.err.printf("r%d | gpu matmul %s: %s%n", Comm.world().rank(), t.specName(),
                        matmul.isPresent() && matmul.get().supports(t) ? matmul.get() : "PTX GEMM kernel");
            }
        }
    }

    private static CUfunction function(CUmodule cuModule, Kernel k) {
        CUfunction fn = new CUfunction();
        JCudaDriver.cuModuleGetFunction(fn, cuModule, k.name());
        return fn;
    }

    private static void matmulDtypes(BlockPlan b, Set<DType> out) {
        for (Step s : b.steps()) {
            switch (s) {
                case Step.Matmul m -> out.add(m.dtype());
                case Step.While w -> {
                    matmulDtypes(w.cond(), out);
                    matmulDtypes(w.body(), out);
                }
                case Step.Fori l -> matmulDtypes(l.body(), out);
                case Step.If i -> {
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
        for (Step s : b.steps()) {
            switch (s) {
                case Step.Constant c -> {
                    DeviceBuffer buf = pool.take(c.data().byteSize());
                    if (c.data().byteSize() > 0) {
                        JCudaDriver.cuMemcpyHtoD(buf.pointer(), host(c.data()), c.data().byteSize());
                    }
                    constants.put(c, buf);
                    pinned.put(buf, true);
                }
                case Step.CustomCall c -> {
                    String target = c.op().attr("call_target_name") instanceof Attr.Str str ? str.value() : "";
                    if (!handlers.containsKey(target)) {
                        throw new WeftException(c.op().location(), "no GPU handler for custom call '" + target
                                + "' (handlers: " + handlers.keySet() + ")");
                    }
                }
                case Step.While w -> {
                    prepare(w.cond());
                    prepare(w.body());
                }
                case Step.Fori l -> prepare(l.body());
                case Step.If i -> {
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
     * The times this executable has waited for its stream so far: once per run for its results, plus once per
     * {@code while} round and per {@code if} for the predicate. A {@code Weft.fori} loop adds none.
     */
    public synchronized long hostSynchronisations() {
        return hostSynchronisations;
    }

    @Override
    public synchronized List<Tensor> run(List<Tensor> args) {
        if (args.size() != argumentTypes.length) {
            throw new WeftException(SourceLocation.capture(), "expected " + argumentTypes.length + " arguments, got "
                    + args.size());
        }
        device.makeCurrent();
        Frame f = new Frame(plan.slots(), pool, pinned);
        BlockPlan main = plan.main();
        for (int i = 0; i < args.size(); i++) {
            MemorySegment data = argument(args.get(i), i);
            DeviceBuffer buf = pool.take(data.byteSize());
            if (data.byteSize() > 0) {
                JCudaDriver.cuMemcpyHtoD(buf.pointer(), host(data), data.byteSize());
            }
            f.define(main.arguments()[i], buf);
        }
        runner.run(main, f);
        List<Tensor> results = new ArrayList<>(resultTypes.length);
        List<MemorySegment> segments = new ArrayList<>();
        for (int i = 0; i < resultTypes.length; i++) {
            MemorySegment seg = NativeMemory.allocate(resultTypes[i].byteSize());
            if (seg.byteSize() > 0) {
                JCudaDriver.cuMemcpyDtoHAsync(host(seg), f.slots[main.results()[i]].pointer(), seg.byteSize(),
                        stream.stream());
            }
            segments.add(seg);
        }
        JCudaDriver.cuStreamSynchronize(stream.stream());
        hostSynchronisations++;
        PlanRunner.releaseResults(main, f);
        for (int i = 0; i < resultTypes.length; i++) {
            results.add(TensorAccess.concrete(resultTypes[i].aval(), segments.get(i)));
        }
        return results;
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

    private static Pointer host(MemorySegment seg) {
        return Pointer.to(seg.asByteBuffer());
    }

    private void launch(Kernel k, DeviceBuffer[] params) {
        Pointer[] ptrs = new Pointer[params.length];
        for (int i = 0; i < params.length; i++) {
            ptrs[i] = Pointer.to(params[i].pointer());
        }
        launch(functions.get(k), k, ptrs);
    }

    private void launch(CUfunction fn, Kernel k, Pointer[] params) {
        var l = k.launch();
        JCudaDriver.cuLaunchKernel(fn, l.gridX(), l.gridY(), l.gridZ(), l.blockX(), l.blockY(), 1, 0,
                stream.stream(), Pointer.to(params), null);
    }

    private void matmul(Step.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
        if (matmul.isPresent() && matmul.get().supports(m.dtype())) {
            matmul.get().gemm(stream, m.dtype(), m.m(), m.n(), m.k(), a.address(), b.address(), c.address(),
                    m.batch());
        } else {
            launch(m.fallback(), new DeviceBuffer[] {a, b, c});
        }
    }

    private DeviceBuffer[] customCall(Step.CustomCall c, DeviceBuffer[] operands) {
        DeviceBuffer[] results = new DeviceBuffer[c.results().length];
        for (int r = 0; r < results.length; r++) {
            if (c.results()[r] >= 0) {
                results[r] = pool.take(c.resultBytes()[r]);
            }
        }
        String name = ((Attr.Str) c.op().attr("call_target_name")).value();
        try {
            handlers.get(name).call(c.op(), operands, results, stream);
        } catch (WeftException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new WeftException(c.op().location(), name + " failed: " + e.getMessage(), e);
        }
        return results;
    }

    /** Reads a rank-0 BOOL from the device: waits for everything enqueued before it. */
    private boolean predicate(DeviceBuffer b) {
        JCudaDriver.cuMemcpyDtoHAsync(host(predicate), b.pointer(), 1, stream.stream());
        JCudaDriver.cuStreamSynchronize(stream.stream());
        hostSynchronisations++;
        return predicate.get(ValueLayout.JAVA_BYTE, 0) != 0;
    }

    /** The device operations of {@link PlanRunner}: this executable's stream, kernels, matmul and handlers. */
    private final class Queue implements PlanRunner.Device {
        @Override
        public DeviceBuffer constant(Step.Constant c) {
            return constants.get(c);
        }

        @Override
        public void launch(Kernel kernel, DeviceBuffer[] params) {
            GpuExecutable.this.launch(kernel, params);
        }

        @Override
        public void matmul(Step.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
            GpuExecutable.this.matmul(m, a, b, c);
        }

        @Override
        public DeviceBuffer[] customCall(Step.CustomCall c, DeviceBuffer[] operands) {
            return GpuExecutable.this.customCall(c, operands);
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
            JCudaDriver.cuMemcpyDtoDAsync(CudaHandles.pointer(dst), CudaHandles.pointer(src), bytes,
                    stream.stream());
        }

        @Override
        public void upload(MemorySegment host, long dst) {
            long words = host.byteSize() / 4;
            for (long w = 0; w < words; w++) {
                JCudaDriver.cuMemsetD32Async(CudaHandles.pointer(dst + 4 * w),
                        host.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * w), 1, stream.stream());
            }
            for (long b = 4 * words; b < host.byteSize(); b++) {
                JCudaDriver.cuMemsetD8Async(CudaHandles.pointer(dst + b), host.get(ValueLayout.JAVA_BYTE, b), 1,
                        stream.stream());
            }
        }

        @Override
        public void launch(Kernel kernel, long... params) {
            CUfunction fn = functions.computeIfAbsent(kernel,
                    k -> function(PtxModules.load(target.module(List.of(k))), k));
            Pointer[] ptrs = new Pointer[params.length];
            for (int i = 0; i < params.length; i++) {
                ptrs[i] = Pointer.to(new long[] {params[i]});
            }
            GpuExecutable.this.launch(fn, kernel, ptrs);
        }
    }
}
