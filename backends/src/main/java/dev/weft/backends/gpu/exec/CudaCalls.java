package dev.weft.backends.gpu.exec;

import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.PtxTarget;
import java.lang.foreign.MemorySegment;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * The CUDA driver calls of the GPU executor on one device ({@link CudaDevice}), behind an interface so that tests
 * can run the executor against a recording fake. Every copy, memset and launch is queued on a stream: there is
 * no call here that copies on the legacy default stream, which the executor's non-blocking stream would not be
 * ordered with. Host memory passes as segments of at most {@link HostCopies#CHUNK} bytes.
 *
 * <p>This is the driver level, one below {@link PlanRunner.Device}: a {@link PlanRunner} hands plan steps to its
 * executable, which turns them into these calls on its stream (and handles custom-call batching there).
 */
interface CudaCalls {
    /** What generated PTX is written for on this device ({@link PtxTarget#forDevice} on a real one). */
    PtxTarget target();

    /** Makes this device's context current on the calling thread. */
    void makeCurrent();

    /** {@code cuStreamCreate} with {@code CU_STREAM_NON_BLOCKING}. */
    GpuStream newStream();

    /** {@code cuStreamDestroy}. */
    void destroyStream(GpuStream stream);

    /**
     * {@code cuModuleLoadDataEx} of PTX text, failing with the JIT's error log when the driver rejects it
     * ({@link PtxModules#load}).
     */
    CUmodule loadModule(String ptx);

    /** {@code cuModuleGetFunction}. */
    CUfunction function(CUmodule module, String name);

    /** {@code cuModuleUnload}. */
    void unloadModule(CUmodule module);

    /** {@code cuMemAlloc}. */
    DeviceBuffer allocate(long bytes);

    /** {@code cuMemFree}. */
    void free(DeviceBuffer buffer);

    /**
     * {@code cuMemcpyHtoDAsync} of {@code host} to device address {@code dst} on {@code stream}. The driver may
     * return before it has read {@code host}: it must stay reachable and unchanged until the stream has passed
     * the copy.
     */
    void copyToDevice(MemorySegment host, long dst, GpuStream stream);

    /** {@code cuMemcpyDtoHAsync} into {@code host}, which holds the bytes once the stream has passed the copy. */
    void copyToHost(long src, MemorySegment host, GpuStream stream);

    /** {@code cuMemcpyDtoDAsync}. */
    void copyOnDevice(long dst, long src, long bytes, GpuStream stream);

    /** {@code cuMemsetD32Async} of {@code words} 32-bit words. */
    void setWords(long dst, int value, long words, GpuStream stream);

    /** {@code cuMemsetD8Async} of {@code bytes} bytes. */
    void setBytes(long dst, byte value, long bytes, GpuStream stream);

    /** {@code cuLaunchKernel} of {@code function} (the loaded {@code kernel}) with its launch shape. */
    void launch(CUfunction function, Kernel kernel, Pointer params, GpuStream stream);

    /** {@code cuStreamSynchronize}: returns once everything queued on {@code stream} has finished. */
    void synchronize(GpuStream stream);
}
