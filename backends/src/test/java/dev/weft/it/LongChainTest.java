package dev.weft.it;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.testing.TensorAssert;
import org.junit.jupiter.api.Test;

/** A Java loop unrolled while tracing into thousands of elementwise ops compiles, and equals eager bit for bit. */
class LongChainTest {
    static Tensor chain(Tensor x, int n) {
        Tensor c = x;
        for (int k = 0; k < n; k++) {
            c = c.mul(0.999).add(c.sin().mul(0.001));
        }
        return c;
    }

    @Compile
    static Tensor chainCompiled(Tensor x, int n) {
        return chain(x, n);
    }

    @Test
    void aChainOfSixThousandOpsCompiled() {
        Tensor x = Tensor.arange(DType.F64, 64).mul(0.1);
        TensorAssert.assertThat(chainCompiled(x, 1500)).isEqualTo(chain(x, 1500));
    }
}
