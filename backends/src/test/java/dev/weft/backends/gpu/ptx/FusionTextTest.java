package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The text generated for {@code x * s + 1.5} (f32[1000], rank-0 {@code s}), checked without any GPU tool. */
class FusionTextTest {
    private final Kernel k = ElementwiseKernels.fusion(HandBuiltOps.scaleAndShift(), "fused");

    @Test
    void declaresPointerParametersAndRegistersPerClass() {
        assertThat(k.params()).isEqualTo(3);
        assertThat(k.ptx()).startsWith("""
                .visible .entry fused(
                    .param .u64 p0,
                    .param .u64 p1,
                    .param .u64 p2)
                {
                    .reg .pred %p<2>;
                    .reg .b32 %r<5>;
                    .reg .b64 %rd<9>;
                    .reg .f32 %f<6>;
                """);
    }

    @Test
    void loadsTheScalarOnceAndEachElementInAGridStrideLoop() {
        assertThat(k.ptx()).contains("""
                    ld.param.u64 %rd2, [p1];
                    cvta.to.global.u64 %rd2, %rd2;
                    ld.param.u64 %rd3, [p2];
                    cvta.to.global.u64 %rd3, %rd3;
                    ld.global.f32 %f1, [%rd2];
                    mov.u32 %r1, %ctaid.x;
                """);
        assertThat(k.ptx()).contains("""
                L1:
                    setp.ge.u64 %p1, %rd4, 1000;
                    @%p1 bra L2;
                    mad.lo.s64 %rd7, %rd4, 4, %rd1;
                    ld.global.f32 %f2, [%rd7];
                    mul.rn.f32 %f3, %f2, %f1;
                    mov.f32 %f4, 0f3FC00000;
                    add.rn.f32 %f5, %f3, %f4;
                    mad.lo.s64 %rd8, %rd4, 4, %rd3;
                    st.global.f32 [%rd8], %f5;
                    add.s64 %rd4, %rd4, %rd6;
                    bra L1;
                L2:
                    ret;
                }
                """);
        assertThat(k.launch()).isEqualTo(new Launch(4, 1, 1, 256, 1));
    }
}
