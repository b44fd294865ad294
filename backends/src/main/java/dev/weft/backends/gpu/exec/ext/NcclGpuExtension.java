package dev.weft.backends.gpu.exec.ext;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.gpu.exec.DeviceBuffer;
import dev.weft.backends.gpu.exec.GpuCustomCallHandler;
import dev.weft.backends.gpu.exec.GpuExtension;
import dev.weft.backends.gpu.exec.GpuResources;
import dev.weft.backends.gpu.nccl.NcclCallHandler;
import dev.weft.backends.gpu.nccl.NcclCommunicator;
import dev.weft.backends.gpu.nccl.NcclCommunicators;
import dev.weft.backends.gpu.nccl.NcclContext;
import dev.weft.backends.gpu.nccl.NcclCustomCalls;
import dev.weft.backends.gpu.nccl.NcclLibrary;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.spi.CommBindings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs the {@code weft.nccl.*} custom calls with NCCL ({@link NcclCustomCalls}) on the executor's stream, with
 * the executor's pool as device memory ({@link PooledDeviceMemory}), generated kernels for custom reduce ops
 * ({@link KernelLocalReduce}) and CUDA events for nonblocking requests ({@link CudaStreamEvents}).
 *
 * <p>The NCCL library is found by {@link NcclLibrary#load}'s rules when a module has a {@code weft.nccl.*} call.
 * The NCCL communicators are per process and library, shared by every executable: the first executable naming a
 * communicator creates its NCCL communicator collectively (unique id broadcast over the bootstrap communicator).
 * A module with a {@code weft.nccl.*} call fails to build, at that call's source line, when NCCL cannot be loaded
 * or when a custom reduce op's function cannot run as a kernel; there is no CPU fallback.
 */
public final class NcclGpuExtension implements GpuExtension {
    private static final CudaStreamEvents EVENTS = new CudaStreamEvents();
    private static final Map<String, NcclCommunicators> BY_LIBRARY = new ConcurrentHashMap<>();

    @Override
    public Map<String, GpuCustomCallHandler> customCalls(Module module, CommBindings comms,
                                                         GpuResources resources) {
        List<Op> calls = NcclCustomCalls.commCalls(module);
        if (calls.isEmpty()) {
            return Map.of();
        }
        NcclCommunicators nccl = communicators(calls.getFirst());
        for (Op op : calls) {
            if (op.attr("called_computations") instanceof Attr.Array(List<Attr> fs)) {
                Func reduction = module.function(((Attr.Symbol) fs.getFirst()).name());
                try {
                    KernelLocalReduce.check(reduction);
                } catch (IllegalArgumentException e) {
                    throw new CommException(op.location(), target(op) + ": custom reduce op cannot run on the GPU: "
                            + e.getMessage(), e);
                }
            }
        }
        PooledDeviceMemory memory = new PooledDeviceMemory(resources);
        NcclContext ctx = new NcclContext(nccl, memory, new KernelLocalReduce(resources));
        Map<String, GpuCustomCallHandler> handlers = new LinkedHashMap<>();
        NcclCustomCalls.handlers(module, comms, ctx).forEach((name, h) -> handlers.put(name, adapt(h, memory, resources)));
        return handlers;
    }

    /** Ends this thread's open NCCL group ({@link NcclCommunicator#flush}). */
    @Override
    public void flush() {
        NcclCommunicator.flush();
    }

    private static String target(Op op) {
        return op.attr("call_target_name") instanceof Attr.Str(String name) ? name : "";
    }

    /** The communicators over the NCCL library named now; fails at {@code first}'s line if it cannot be loaded. */
    private static NcclCommunicators communicators(Op first) {
        NcclLibrary nccl;
        try {
            nccl = NcclLibrary.load();
        } catch (IllegalStateException e) {
            throw new CommException(first.location(), target(first) + " needs NCCL: " + e.getMessage(), e);
        }
        return BY_LIBRARY.computeIfAbsent(nccl.toString(), file -> new NcclCommunicators(nccl, EVENTS));
    }

    /**
     * The executor's form of an NCCL handler: device addresses in (0 for tokens), and a buffer the handler returns
     * in place of the one it was given (a received message) taken over from {@code memory} as the result.
     */
    static GpuCustomCallHandler adapt(NcclCallHandler handler, PooledDeviceMemory memory, GpuResources resources) {
        return (op, operands, results, stream) -> {
            List<Long> returned = handler.call(op, addresses(operands), addresses(results), stream.handle());
            if (returned.size() != results.length) {
                throw new IllegalStateException(target(op) + " returned " + returned.size() + " results for "
                        + results.length);
            }
            for (int r = 0; r < results.length; r++) {
                if (results[r] != null && returned.get(r) != results[r].address()) {
                    resources.give(results[r]);
                    results[r] = memory.handOver(returned.get(r));
                }
            }
        };
    }

    private static long[] addresses(DeviceBuffer[] buffers) {
        long[] a = new long[buffers.length];
        for (int i = 0; i < buffers.length; i++) {
            a[i] = buffers[i] == null ? NcclCallHandler.TOKEN : buffers[i].address();
        }
        return a;
    }
}
