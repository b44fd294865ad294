package dev.weft.backends.gpu.exec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Every transfer between host memory and the device that one executable makes, all queued on its stream, so
 * that they are ordered with its kernels (a copy on the legacy default stream is not ordered with a
 * {@code CU_STREAM_NON_BLOCKING} stream).
 *
 * <ul>
 *   <li>{@link #upload} queues {@code cuMemcpyHtoDAsync} from the caller's memory and keeps that memory
 *       reachable until the next {@link #synchronize}: the driver may return before the DMA has read it.</li>
 *   <li>{@link #download} queues {@code cuMemcpyDtoHAsync}; the host memory holds the bytes only after the next
 *       {@link #synchronize}.</li>
 *   <li>{@link #uploadValue} writes a few bytes as memset values, so the caller's memory is not read later.</li>
 * </ul>
 *
 * <p>Copies go in pieces of at most {@value #CHUNK} bytes: JCuda takes host memory as a {@code ByteBuffer}, which
 * holds less than 2 GiB. Used by one thread at a time, with the device's context current.
 */
final class HostCopies {
    /** The largest piece of one copy, in bytes (1 GiB). */
    static final long CHUNK = 1L << 30;

    private final CudaCalls cuda;
    private final GpuStream stream;
    private final long chunk;
    private final List<MemorySegment> inFlight = new ArrayList<>();
    private long synchronisations;

    HostCopies(CudaCalls cuda, GpuStream stream) {
        this(cuda, stream, CHUNK);
    }

    /** With pieces of at most {@code chunk} bytes (tests use small ones). */
    HostCopies(CudaCalls cuda, GpuStream stream, long chunk) {
        this.cuda = cuda;
        this.stream = stream;
        this.chunk = chunk;
    }

    /** Queues the copy of {@code host} to device address {@code dst}; {@code host} must not change until then. */
    void upload(MemorySegment host, long dst) {
        for (long off = 0; off < host.byteSize(); off += chunk) {
            cuda.copyToDevice(host.asSlice(off, Math.min(chunk, host.byteSize() - off)), dst + off, stream);
        }
        if (host.byteSize() > 0) {
            inFlight.add(host);
        }
    }

    /** Queues the copy of {@code host.byteSize()} bytes at device address {@code src} into {@code host}. */
    void download(long src, MemorySegment host) {
        for (long off = 0; off < host.byteSize(); off += chunk) {
            cuda.copyToHost(src + off, host.asSlice(off, Math.min(chunk, host.byteSize() - off)), stream);
        }
        if (host.byteSize() > 0) {
            inFlight.add(host);
        }
    }

    /**
     * Queues the upload of {@code host} (a few words) to device address {@code dst} as 32-bit and then 8-bit
     * memsets; {@code host} may be reused on return.
     */
    void uploadValue(MemorySegment host, long dst) {
        long words = host.byteSize() / 4;
        for (long w = 0; w < words; w++) {
            cuda.setWords(dst + 4 * w, host.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * w), 1, stream);
        }
        for (long b = 4 * words; b < host.byteSize(); b++) {
            cuda.setBytes(dst + b, host.get(ValueLayout.JAVA_BYTE, b), 1, stream);
        }
    }

    /** Waits for everything queued on the stream: downloads may be read and uploaded memory reused after this. */
    void synchronize() {
        cuda.synchronize(stream);
        synchronisations++;
        inFlight.clear();
    }

    /** The {@link #synchronize} calls so far: the host's waits for the stream. */
    long synchronisations() {
        return synchronisations;
    }
}
