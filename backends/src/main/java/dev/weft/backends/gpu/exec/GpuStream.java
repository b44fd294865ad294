package dev.weft.backends.gpu.exec;

import jcuda.driver.CUstream;

/** The executor's stream: the JCuda handle and the raw {@code CUstream} ({@code cudaStream_t}) for FFM bindings. */
public record GpuStream(CUstream stream, long handle) {
}
