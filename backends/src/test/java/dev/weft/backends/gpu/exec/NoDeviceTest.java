package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Without a CUDA device, running on the GPU target fails clearly instead of falling back to the CPU. */
class NoDeviceTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor twice(Tensor x) {
        return x.mul(2);
    }

    /** The cached CPU executable of the first call must not answer the GPU call: the target is in the cache key. */
    @Test
    void runningOnTargetGpuWithoutADeviceIsAnError() {
        assumeTrue(GpuExecutable.unavailableReason().isPresent(), "a CUDA device is present");
        assertThat(twice(Tensor.of(new float[] {1, 2}, 2)).toFloatArray()).containsExactly(2, 4);
        String previous = System.setProperty("weft.target", "gpu");
        try {
            assertThatThrownBy(() -> twice(Tensor.of(new float[] {1, 2}, 2)))
                    .isInstanceOf(WeftException.class)
                    .hasMessageStartingWith("target gpu needs an NVIDIA GPU and driver: ");
        } finally {
            if (previous == null) {
                System.clearProperty("weft.target");
            } else {
                System.setProperty("weft.target", previous);
            }
        }
        assertThat(twice(Tensor.of(new float[] {1, 2}, 2)).toFloatArray()).containsExactly(2, 4);
    }
}
