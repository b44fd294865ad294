package dev.weft.backends.gpu.exec;

import dev.weft.WeftException;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA device of this rank ({@code rank % deviceCount}) through its primary context, and the driver calls
 * the executor makes on it ({@link CudaCalls}, through JCuda). Opening fails with "target gpu needs an NVIDIA GPU
 * and driver: ..." when the JCuda native library cannot load, {@code cuInit} fails, there is no device, or the
 * device or driver is too old for Weft's PTX ({@link PtxTarget#forDevice}); there is never a CPU fallback.
 */
final class CudaDevice implements CudaCalls {
    final CUcontext context;
    final int ordinal;
    private final PtxTarget target;

    private CudaDevice(CUcontext context, int ordinal, PtxTarget target) {
        this.context = context;
        this.ordinal = ordinal;
        this.target = target;
    }

    static CudaDevice open(int rank) {
        try {
            JCudaDriver.setExceptionsEnabled(true);
            JCudaDriver.cuInit(0);
            int[] count = new int[1];
            JCudaDriver.cuDeviceGetCount(count);
            if (count[0] == 0) {
                throw unavailable("no CUDA device is visible");
            }
            int ordinal = rank % count[0];
            CUdevice device = new CUdevice();
            JCudaDriver.cuDeviceGet(device, ordinal);
            PtxTarget target = target(device);
            CUcontext context = new CUcontext();
            JCudaDriver.cuDevicePrimaryCtxRetain(context, device);
            JCudaDriver.cuCtxSetCurrent(context);
            return new CudaDevice(context, ordinal, target);
        } catch (IllegalArgumentException e) {
            throw unavailable(e.getMessage());
        } catch (CudaException | LinkageError e) {
            String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
            throw unavailable(e.getClass().getSimpleName() + ": " + first);
        }
    }

    /** The PTX target of {@code device}: its compute capability, under this driver ({@link PtxTarget#forDevice}). */
    private static PtxTarget target(CUdevice device) {
        int[] major = new int[1], minor = new int[1], driver = new int[1];
        JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                device);
        JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                device);
        JCudaDriver.cuDriverGetVersion(driver);
        return PtxTarget.forDevice(major[0], minor[0], driver[0]);
    }

    @Override
    public PtxTarget target() {
        return target;
    }

    private static WeftException unavailable(String reason) {
        return new WeftException(SourceLocation.UNKNOWN, "target gpu needs an NVIDIA GPU and driver: " + reason);
    }

    @Override
    public void makeCurrent() {
        JCudaDriver.cuCtxSetCurrent(context);
    }

    @Override
    public GpuStream newStream() {
        CUstream s = new CUstream();
        JCudaDriver.cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING);
        return new GpuStream(s, CudaHandles.raw(s));
    }

    @Override
    public void destroyStream(GpuStream stream) {
        JCudaDriver.cuStreamDestroy(stream.stream());
    }

    @Override
    public CUmodule loadModule(String ptx) {
        return PtxModules.load(ptx);
    }

    @Override
    public CUfunction function(CUmodule module, String name) {
        CUfunction fn = new CUfunction();
        JCudaDriver.cuModuleGetFunction(fn, module, name);
        return fn;
    }

    @Override
    public void unloadModule(CUmodule module) {
        JCudaDriver.cuModuleUnload(module);
    }

    @Override
    public DeviceBuffer allocate(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(p, bytes);
        return new DeviceBuffer(p, CudaHandles.raw(p), bytes);
    }

    @Override
    public void free(DeviceBuffer buffer) {
        JCudaDriver.cuMemFree(buffer.pointer());
    }

    @Override
    public void copyToDevice(MemorySegment host, long dst, GpuStream stream) {
        JCudaDriver.cuMemcpyHtoDAsync(CudaHandles.pointer(dst), Pointer.to(host.asByteBuffer()), host.byteSize(),
                stream.stream());
    }

    @Override
    public void copyToHost(long src, MemorySegment host, GpuStream stream) {
        JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(host.asByteBuffer()), CudaHandles.pointer(src), host.byteSize(),
                stream.stream());
    }

    @Override
    public void copyOnDevice(long dst, long src, long bytes, GpuStream stream) {
        JCudaDriver.cuMemcpyDtoDAsync(CudaHandles.pointer(dst), CudaHandles.pointer(src), bytes, stream.stream());
    }

    @Override
    public void setWords(long dst, int value, long words, GpuStream stream) {
        JCudaDriver.cuMemsetD32Async(CudaHandles.pointer(dst), value, words, stream.stream());
    }

    @Override
    public void setBytes(long dst, byte value, long bytes, GpuStream stream) {
        JCudaDriver.cuMemsetD8Async(CudaHandles.pointer(dst), value, bytes, stream.stream());
    }

    @Override
    public void launch(CUfunction function, Kernel kernel, Pointer params, GpuStream stream) {
        var l = kernel.launch();
        JCudaDriver.cuLaunchKernel(function, l.gridX(), l.gridY(), l.gridZ(), l.blockX(), l.blockY(), 1, 0,
                stream.stream(), params, null);
    }

    @Override
    public void synchronize(GpuStream stream) {
        JCudaDriver.cuStreamSynchronize(stream.stream());
    }
}
