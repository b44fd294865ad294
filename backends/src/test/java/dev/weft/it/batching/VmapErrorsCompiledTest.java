package dev.weft.it.batching;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Inside {@code @Compile}, {@code vmap}'s errors name the user's line too (dsl's VmapErrorsTest has the others). */
class VmapErrorsCompiledTest {
    private static final Function<List<Tensor>, List<Tensor>> SUM = xs -> List.of(xs.get(0).add(xs.get(1)));

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor mismatchedCompiled(Tensor a, Tensor b) {
        return Weft.vmap(SUM, new int[] {0, 0}, new int[] {0}).apply(List.of(a, b)).getFirst();
    }

    @Test
    void insideCompileTheErrorNamesTheLineToo() {
        assertThatThrownBy(() -> mismatchedCompiled(Tensor.zeros(DType.F64, 3, 2), Tensor.zeros(DType.F64, 4, 2)))
                .isInstanceOf(ShapeException.class).hasMessageContaining("VmapErrorsCompiledTest.java:26")
                .hasMessageContaining("must agree");
    }
}
