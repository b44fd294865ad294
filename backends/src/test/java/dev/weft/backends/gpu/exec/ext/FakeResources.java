package dev.weft.backends.gpu.exec.ext;

import dev.weft.backends.gpu.exec.DeviceBuffer;
import dev.weft.backends.gpu.exec.GpuResources;
import dev.weft.backends.gpu.exec.GpuStream;
import dev.weft.backends.gpu.ptx.Kernel;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jcuda.driver.CUstream;

/**
 * Stands in for an executable's resources without a device: stream {@value #STREAM}, buffers at device addresses
 * 900000, 901000, ..., and every request recorded as a line; launched kernels are kept.
 */
final class FakeResources implements GpuResources {
    static final long STREAM = 4242;

    final List<String> lines = new ArrayList<>();
    final List<Kernel> launched = new ArrayList<>();
    private final GpuStream stream = new GpuStream(new CUstream(), STREAM);
    private long buffers;

    @Override
    public GpuStream stream() {
        return stream;
    }

    @Override
    public DeviceBuffer take(long bytes) {
        long address = 900000 + 1000 * buffers++;
        lines.add("take " + bytes + " -> " + address);
        return new DeviceBuffer(null, address, bytes);
    }

    @Override
    public void give(DeviceBuffer buffer) {
        lines.add("give " + buffer.address());
    }

    @Override
    public void copy(long dst, long src, long bytes) {
        lines.add("copy dst=" + dst + " src=" + src + " bytes=" + bytes);
    }

    @Override
    public void upload(MemorySegment host, long dst) {
        lines.add("upload int=" + host.get(ValueLayout.JAVA_INT, 0) + " bytes=" + host.byteSize() + " dst=" + dst);
    }

    @Override
    public void launch(Kernel kernel, long... params) {
        launched.add(kernel);
        lines.add("launch " + kernel.name() + " " + Arrays.toString(params));
    }
}
