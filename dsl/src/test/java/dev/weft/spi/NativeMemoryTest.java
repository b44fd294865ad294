package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NativeMemoryTest {
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 1000, 1024, 1025, 100_000, 2L << 20, (3L << 20) + 5})
    void segmentsAreZeroedAlignedAndWritableToTheEnd(long bytes) {
        MemorySegment s = NativeMemory.allocate(bytes);
        assertThat(s.byteSize()).isEqualTo(Math.max(1, bytes));
        assertThat(s.address() % 64).isZero();
        for (long i = 0; i < s.byteSize(); i += 4093) {
            assertThat(s.get(ValueLayout.JAVA_BYTE, i)).isZero();
        }
        s.set(ValueLayout.JAVA_BYTE, s.byteSize() - 1, (byte) 7);
        assertThat(s.get(ValueLayout.JAVA_BYTE, s.byteSize() - 1)).isEqualTo((byte) 7);
    }

    @ParameterizedTest
    @ValueSource(longs = {16, 4L << 20})
    void buffersDoNotOverlap(long bytes) {
        MemorySegment a = NativeMemory.allocate(bytes);
        MemorySegment b = NativeMemory.allocate(bytes);
        a.fill((byte) 1);
        b.fill((byte) 2);
        assertThat(a.get(ValueLayout.JAVA_BYTE, bytes - 1)).isEqualTo((byte) 1);
        assertThat(b.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 2);
    }
}
