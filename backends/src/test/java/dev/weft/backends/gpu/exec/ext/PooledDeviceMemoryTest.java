package dev.weft.backends.gpu.exec.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.backends.gpu.exec.DeviceBuffer;
import dev.weft.backends.gpu.exec.GpuCustomCallHandler;
import dev.weft.backends.gpu.nccl.NcclCallHandler;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PooledDeviceMemory} and the NCCL handler adapter over an executable's (fake) pool and stream. */
class PooledDeviceMemoryTest {
    private static final long STREAM = FakeResources.STREAM;

    @Test
    void buffersComeFromThePoolAndGoBackToIt() {
        FakeResources res = new FakeResources();
        PooledDeviceMemory memory = new PooledDeviceMemory(res);
        long a = memory.allocate(STREAM, 100);
        long b = memory.allocate(STREAM, 4);
        memory.copy(STREAM, b, a, 4);
        memory.copy(STREAM, b, a, 0);
        try (Arena arena = Arena.ofConfined()) {
            memory.upload(STREAM, arena.allocateFrom(ValueLayout.JAVA_INT, 3), b);
        }
        memory.free(STREAM, a);
        assertThat(memory.handOver(b).address()).isEqualTo(901000);
        assertThat(res.lines).containsExactly("take 100 -> 900000", "take 4 -> 901000",
                "copy dst=901000 src=900000 bytes=4", "upload int=3 bytes=4 dst=901000", "give 900000");
    }

    @Test
    void onlyTheExecutablesStreamAndItsOwnBuffersAreAccepted() {
        PooledDeviceMemory memory = new PooledDeviceMemory(new FakeResources());
        assertThatThrownBy(() -> memory.allocate(7, 16))
                .hasMessage("stream 0x7 is not the executable's stream 0x1092");
        long a = memory.allocate(STREAM, 16);
        memory.free(STREAM, a);
        assertThatThrownBy(() -> memory.free(STREAM, a))
                .hasMessage("device address 0xdbba0 was not allocated here or was already freed");
    }

    /**
     * A handler that returns its own buffer (a received message) in place of the executor's: the executor's goes
     * back to the pool and the handler's becomes the result; tokens pass as 0.
     */
    @Test
    void aBufferReturnedInPlaceOfTheResultIsHandedToTheExecutor() {
        FakeResources res = new FakeResources();
        PooledDeviceMemory memory = new PooledDeviceMemory(res);
        long received = memory.allocate(STREAM, 16);
        NcclCallHandler handler = (op, operands, results, stream) -> {
            assertThat(operands).containsExactly(1000, NcclCallHandler.TOKEN);
            assertThat(results).containsExactly(2000, 3000, NcclCallHandler.TOKEN);
            assertThat(stream).isEqualTo(STREAM);
            return List.of(received, 3000L, NcclCallHandler.TOKEN);
        };
        GpuCustomCallHandler adapted = NcclGpuExtension.adapt(handler, memory, res);
        DeviceBuffer given = new DeviceBuffer(null, 2000, 16), kept = new DeviceBuffer(null, 3000, 8);
        DeviceBuffer[] results = {given, kept, null};
        adapted.call(null, new DeviceBuffer[] {new DeviceBuffer(null, 1000, 16), null}, results, res.stream());
        assertThat(results[0].address()).isEqualTo(received);
        assertThat(results[1]).isSameAs(kept);
        assertThat(results[2]).isNull();
        assertThat(res.lines).containsExactly("take 16 -> 900000", "give 2000");
        assertThatThrownBy(() -> memory.handOver(received)).hasMessageContaining("already freed");
    }
}
