package dev.weft.backends.gpu.exec;

import jcuda.driver.CUdeviceptr;

/** Device memory of {@code bytes} bytes: the JCuda handle and the raw device address (for FFM bindings). */
public record DeviceBuffer(CUdeviceptr pointer, long address, long bytes) {
}
