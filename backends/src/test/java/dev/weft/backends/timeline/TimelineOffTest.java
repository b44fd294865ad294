package dev.weft.backends.timeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;
import org.junit.jupiter.api.Test;

/** With {@code WEFT_TIMELINE} unset, compiled calls, kernels and communication record nothing. */
class TimelineOffTest {
    @Compile
    static Tensor step(Comm comm, Tensor x) {
        return comm.allreduce(x.mul(x).add(1), ReduceOp.SUM);
    }

    @Test
    void recordsNothingWhenUnset() {
        assumeTrue(!Timeline.ENABLED, "WEFT_TIMELINE is set for this test run");
        Weft.install();
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm c = Comm.world();
            Tensor x = Tensor.full(DType.F32, 2, 4);
            assertThat(step(c, x).toFloatArray()).containsExactly(10, 10, 10, 10);
            assertThat(c.allreduce(x, ReduceOp.SUM).toFloatArray()).containsExactly(4, 4, 4, 4);
            return null;
        }));
        assertThat(Timeline.ranksRecorded()).isEmpty();
    }
}
