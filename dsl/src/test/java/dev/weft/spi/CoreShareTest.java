package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CoreShareTest {
    @Test
    void eachRankGetsItsShareOfTheCoresAndAtLeastOne() {
        assertThat(CoreShare.cores(16, 4)).isEqualTo(4);
        assertThat(CoreShare.cores(2, 2)).isEqualTo(1);
        assertThat(CoreShare.cores(2, 3)).as("oversubscribed").isEqualTo(1);
        assertThat(CoreShare.cores(6, 4)).isEqualTo(1);
        assertThat(CoreShare.cores(8, 1)).isEqualTo(8);
    }

    @Test
    void mpiPollsOnlyWhereACoreIsSpare() {
        assertThat(CoreShare.spinInMpi(16, 4)).isTrue();
        assertThat(CoreShare.spinInMpi(3, 2)).isTrue();
        assertThat(CoreShare.spinInMpi(2, 2)).isFalse();
        assertThat(CoreShare.spinInMpi(2, 4)).isFalse();
    }

    @Test
    void outsideALauncherThisProcessIsOneRankWithEveryProcessor() {
        // surefire runs outside mpirun
        assertThat(CoreShare.LOCAL_RANKS).isEqualTo(1);
        assertThat(CoreShare.CORES).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(CoreShare.describe()).contains("1 rank(s) on this node").contains(CoreShare.CORES + " core(s)");
    }
}
