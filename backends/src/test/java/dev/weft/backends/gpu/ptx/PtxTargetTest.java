package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The PTX target follows the device's compute capability and what its driver can load. */
class PtxTargetTest {
    @Test
    void theArchitectureIsTheDevicesWithTheOldestIsaItAccepts() {
        assertThat(PtxTarget.forDevice(8, 0, 12040)).isEqualTo(new PtxTarget("7.0", "sm_80"));
        assertThat(PtxTarget.forDevice(8, 6, 11010)).isEqualTo(new PtxTarget("7.1", "sm_86"));
        assertThat(PtxTarget.forDevice(8, 9, 12000)).isEqualTo(new PtxTarget("7.8", "sm_89"));
        assertThat(PtxTarget.forDevice(9, 0, 13000)).isEqualTo(new PtxTarget("7.8", "sm_90"));
        assertThat(PtxTarget.forDevice(7, 5, 10000)).isEqualTo(new PtxTarget("6.3", "sm_75"));
        assertThat(PtxTarget.forDevice(10, 0, 12080)).isEqualTo(new PtxTarget("8.6", "sm_100"));
        assertThat(PtxTarget.forDevice(12, 0, 12080)).isEqualTo(new PtxTarget("8.7", "sm_120"));
    }

    @Test
    void anArchitectureNewerThanTheTableGetsTheNewestIsaTheDriverLoads() {
        assertThat(PtxTarget.forDevice(13, 0, 13000)).isEqualTo(new PtxTarget("9.0", "sm_130"));
        assertThat(PtxTarget.forDevice(13, 0, 14020)).isEqualTo(new PtxTarget("9.1", "sm_130"));
    }

    @Test
    void theNewestIsaADriverLoadsFollowsThePtxReleaseHistory() {
        assertThat(PtxTarget.driverIsa(12000)).isEqualTo(80);
        assertThat(PtxTarget.driverIsa(12040)).isEqualTo(84);
        assertThat(PtxTarget.driverIsa(12060)).isEqualTo(85);
        assertThat(PtxTarget.driverIsa(12080)).isEqualTo(87);
        assertThat(PtxTarget.driverIsa(12090)).isEqualTo(88);
        assertThat(PtxTarget.driverIsa(13000)).isEqualTo(90);
        assertThat(PtxTarget.driverIsa(11080)).isEqualTo(78);
        assertThat(PtxTarget.driverIsa(8000)).isEqualTo(-1);
    }

    @Test
    void aDriverTooOldForTheArchitectureOrAPreVoltaDeviceIsRefused() {
        assertThatThrownBy(() -> PtxTarget.forDevice(9, 0, 11070))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the CUDA driver (version 11.7) loads PTX up to ISA 7.7, but sm_90 needs ISA 7.8:"
                        + " update the NVIDIA driver");
        assertThatThrownBy(() -> PtxTarget.forDevice(6, 1, 12000))
                .hasMessage("the device has compute capability 6.1; Weft's kernels need 7.0 or newer");
    }

    @Test
    void withoutADeviceTheModuleTargetsAmpere() {
        String ptx = PtxTarget.DEFAULT.module(java.util.List.of());
        assertThat(ptx).contains(".version 7.0\n.target sm_80\n.address_size 64\n");
    }
}
