package dev.weft.backends.gpu.exec;

import dev.weft.WeftException;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.spi.SourceLocation;
import jcuda.CudaException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA device of this rank ({@code rank % deviceCount}) through its primary context, plus the driver calls the
 * executor needs around it. Opening fails with "target gpu needs an NVIDIA GPU and driver: ..." when the JCuda
 * native library cannot load, {@code cuInit} fails, there is no device, or the device or driver is too old for
 * Weft's PTX ({@link PtxTarget#forDevice}); there is never a CPU fallback.
 */
final class CudaDevice {
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

    /** What generated PTX is written for on this device. */
    PtxTarget target() {
        return target;
    }

    private static WeftException unavailable(String reason) {
        return new WeftException(SourceLocation.UNKNOWN, "target gpu needs an NVIDIA GPU and driver: " + reason);
    }

    /** Makes this device's context current on the calling thread. */
    void makeCurrent() {
        JCudaDriver.cuCtxSetCurrent(context);
    }

    GpuStream newStream() {
        CUstream s = new CUstream();
        JCudaDriver.cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING);
        return new GpuStream(s, CudaHandles.raw(s));
    }

    static DeviceBuffer allocate(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(p, bytes);
        return new DeviceBuffer(p, CudaHandles.raw(p), bytes);
    }

    static void free(DeviceBuffer b) {
        JCudaDriver.cuMemFree(b.pointer());
    }
}
