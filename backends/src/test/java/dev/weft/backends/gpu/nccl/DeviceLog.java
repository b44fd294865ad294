package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.lowering.ir.Func;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Stands in for the GPU executor's events, memory and reduction kernels: records each request as a line, hands
 * out events 1, 2, ... and device addresses 900000, 901000, ...
 */
final class DeviceLog implements StreamEvents, DeviceMemory, LocalReduce {
    final List<String> lines = new ArrayList<>();
    private long events;
    private long buffers;

    @Override
    public long record(long stream) {
        long e = ++events;
        lines.add("record stream=" + stream + " -> event " + e);
        return e;
    }

    @Override
    public void wait(long stream, long event) {
        lines.add("wait stream=" + stream + " event=" + event);
    }

    @Override
    public void destroy(long event) {
        lines.add("destroy event=" + event);
    }

    @Override
    public long allocate(long stream, long bytes) {
        long p = 900000 + 1000 * buffers++;
        lines.add("allocate stream=" + stream + " bytes=" + bytes + " -> " + p);
        return p;
    }

    @Override
    public void free(long stream, long ptr) {
        lines.add("free stream=" + stream + " ptr=" + ptr);
    }

    @Override
    public void copy(long stream, long dst, long src, long bytes) {
        lines.add("copy stream=" + stream + " dst=" + dst + " src=" + src + " bytes=" + bytes);
    }

    @Override
    public void upload(long stream, MemorySegment host, long dst) {
        lines.add("upload stream=" + stream + " int=" + host.get(ValueLayout.JAVA_INT, 0) + " bytes="
                + host.byteSize() + " dst=" + dst);
    }

    @Override
    public void apply(long stream, Func function, DType dtype, long count, int ranks, long gathered, long out) {
        lines.add("reduce stream=" + stream + " fn=" + function.name() + " dtype=" + dtype.specName() + " count="
                + count + " ranks=" + ranks + " gathered=" + gathered + " out=" + out);
    }
}
