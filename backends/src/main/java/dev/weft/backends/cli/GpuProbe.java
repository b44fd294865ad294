package dev.weft.backends.cli;

import dev.weft.backends.gpu.exec.GpuExecutable;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

/**
 * {@code scripts/gpu-check.sh}'s device probe: prints each CUDA device this JVM sees (name, compute capability,
 * memory) and exits 0, or prints why the GPU target cannot run here and exits 3.
 */
public final class GpuProbe {
    /** The exit status when there is no usable CUDA device. */
    public static final int NO_DEVICE = 3;

    private GpuProbe() {
    }

    public static void main(String[] args) {
        Optional<String> reason = GpuExecutable.unavailableReason();
        if (reason.isPresent()) {
            System.out.println(reason.get());
            System.exit(NO_DEVICE);
        }
        int[] count = new int[1];
        JCudaDriver.cuDeviceGetCount(count);
        for (int d = 0; d < count[0]; d++) {
            CUdevice device = new CUdevice();
            JCudaDriver.cuDeviceGet(device, d);
            byte[] name = new byte[256];
            JCudaDriver.cuDeviceGetName(name, name.length, device);
            int[] major = new int[1], minor = new int[1];
            JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                    device);
            JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                    device);
            long[] bytes = new long[1];
            JCudaDriver.cuDeviceTotalMem(bytes, device);
            int length = 0;
            while (length < name.length && name[length] != 0) {
                length++;
            }
            System.out.printf("cuda device %d: %s, compute capability %d.%d, %.1f GiB%n", d,
                    new String(name, 0, length, StandardCharsets.UTF_8), major[0], minor[0], bytes[0] / 1073741824.0);
        }
    }
}
