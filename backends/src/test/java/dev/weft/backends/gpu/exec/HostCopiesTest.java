package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link HostCopies} against {@link RecordingCuda}: pieces, stream order, and when host memory may be read. */
class HostCopiesTest {
    private final RecordingCuda cuda = new RecordingCuda();
    private final GpuStream stream = cuda.newStream();

    @Test
    void copiesOfTwoGibibytesAndMoreGoInPiecesOfAtMostOneGibibyte() {
        long gib = 1L << 30;
        // Never read: the copies are only queued (the stream is not synchronised).
        MemorySegment host = MemorySegment.ofAddress(1 << 20).reinterpret(3 * gib + 5);
        long dst = 1L << 40;
        new HostCopies(cuda, stream).upload(host, dst);
        new HostCopies(cuda, stream).download(dst, host.asSlice(0, 2 * gib));
        assertThat(cuda.lines()).containsExactly(
                "stream create 7001",
                "h2d " + gib + " -> " + dst + " stream=7001",
                "h2d " + gib + " -> " + (dst + gib) + " stream=7001",
                "h2d " + gib + " -> " + (dst + 2 * gib) + " stream=7001",
                "h2d 5 -> " + (dst + 3 * gib) + " stream=7001",
                "d2h " + dst + " -> " + gib + " stream=7001",
                "d2h " + (dst + gib) + " -> " + gib + " stream=7001");
    }

    @Test
    void piecesCoverTheBufferExactlyAndArriveInStreamOrder() {
        HostCopies copies = new HostCopies(cuda, stream, 4);
        DeviceBuffer d = cuda.allocate(16);
        MemorySegment up = Arena.ofAuto().allocate(10), down = Arena.ofAuto().allocate(10);
        for (int i = 0; i < 10; i++) {
            up.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
        }
        copies.upload(up, d.address());
        copies.download(d.address(), down);
        assertThat(down.toArray(ValueLayout.JAVA_BYTE)).as("before the sync").containsOnly(0);
        copies.synchronize();
        assertThat(down.toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        long a = d.address();
        assertThat(cuda.lines()).containsSubsequence(
                "h2d 4 -> " + a + " stream=7001", "h2d 4 -> " + (a + 4) + " stream=7001",
                "h2d 2 -> " + (a + 8) + " stream=7001",
                "d2h " + a + " -> 4 stream=7001", "d2h " + (a + 4) + " -> 4 stream=7001",
                "d2h " + (a + 8) + " -> 2 stream=7001", "sync 7001");
    }

    @Test
    void aValueTravelsAsMemsetsSoItsHostMemoryCanBeReusedAtOnce() {
        HostCopies copies = new HostCopies(cuda, stream);
        DeviceBuffer d = cuda.allocate(8);
        MemorySegment value = Arena.ofAuto().allocate(6);
        value.set(ValueLayout.JAVA_INT_UNALIGNED, 0, 0x01020304);
        value.set(ValueLayout.JAVA_BYTE, 4, (byte) 5);
        value.set(ValueLayout.JAVA_BYTE, 5, (byte) 6);
        copies.uploadValue(value, d.address());
        value.fill((byte) 0);
        MemorySegment back = Arena.ofAuto().allocate(6);
        copies.download(d.address(), back);
        copies.synchronize();
        assertThat(back.get(ValueLayout.JAVA_INT_UNALIGNED, 0)).isEqualTo(0x01020304);
        assertThat(List.of(back.get(ValueLayout.JAVA_BYTE, 4), back.get(ValueLayout.JAVA_BYTE, 5)))
                .containsExactly((byte) 5, (byte) 6);
    }
}
