package dev.weft.backends.cpu.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link DataMovement#iota} over several of its chunks, along the outer and the inner axis, in every dtype. */
class IotaTest {
    @ParameterizedTest
    @EnumSource(DType.class)
    void everyElementIsItsIndexAlongTheAxis(DType t) {
        long[] dims = {3, 20_001};
        for (int axis = 0; axis < 2; axis++) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(3 * 20_001L * t.byteSize(), 8);
                DataMovement.iota(t, dims, axis, out);
                for (long i = 0; i < 3 * 20_001L; i++) {
                    long index = axis == 0 ? i / 20_001 : i % 20_001;
                    double expected = t == DType.BOOL ? (index != 0 ? 1 : 0) : index;
                    assertThat(Scalars.getDouble(t, out, i)).as("%s axis %d element %d", t, axis, i)
                            .isEqualTo(expected);
                }
            }
        }
    }
}
