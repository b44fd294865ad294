package dev.weft.it.nn;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code take} compiled gathers the rows that dsl's NnTest checks eagerly. */
class NnCompiledTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor takeCompiled(Tensor t, Tensor i) {
        return t.take(i, 0);
    }

    @Test
    void takeCompiledGathersRows() {
        Tensor table = Tensor.of(new double[] {0, 1, 10, 11, Double.POSITIVE_INFINITY, 21}, 3, 2);
        assertThat(takeCompiled(table, Tensor.of(new long[] {2, 1}, 2)).toDoubleArray())
                .containsExactly(Double.POSITIVE_INFINITY, 21, 10, 11);
    }
}
