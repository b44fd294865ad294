package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code @Compile} body runs once per signature (argument shapes and dtypes, constants and receiver) as long as
 * its executable stays in the method's cache, which keeps the {@value #LIMIT} least recently used by default.
 */
class TracesPerSignatureTest {
    /** The default limit of {@code weft.compileCache.size}. */
    private static final int LIMIT = 64;

    private static int staticTraces;
    private static int lruTraces;
    private static int identityTraces;

    /** A receiver whose field the compiled body reads as a constant. */
    static final class Shifter {
        private final double offset;
        private int traces;

        Shifter(double offset) {
            this.offset = offset;
        }

        @Compile
        Tensor shifted(Tensor x) {
            traces++;
            return x.add(offset);
        }
    }

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @BeforeEach
    void defaultLimit() {
        assumeThat(System.getProperty("weft.compileCache.size")).isNull();
        assumeThat(System.getenv("WEFT_COMPILE_CACHE")).isNull();
    }

    @Compile
    static Tensor lru(Tensor x) {
        lruTraces++;
        return x.add(1);
    }

    @Compile
    static Tensor identity(Tensor x) {
        identityTraces++;
        return x;
    }

    @Compile
    static Tensor scaled(Tensor x, int k) {
        staticTraces++;
        return x.mul(k);
    }

    @Test
    void staticMethodTracesOncePerSignature() {
        assertThat(scaled(Tensor.of(new float[] {1, 2}), 3).toDoubleArray()).containsExactly(3, 6);
        assertThat(staticTraces).isEqualTo(1);
        assertThat(scaled(Tensor.of(new float[] {4, -5}), 3).toDoubleArray()).containsExactly(12, -15);
        assertThat(staticTraces).as("same shape and dtype again").isEqualTo(1);
        assertThat(scaled(Tensor.of(new float[] {1, 2, 3}), 3).toDoubleArray()).containsExactly(3, 6, 9);
        assertThat(staticTraces).as("another shape").isEqualTo(2);
        assertThat(scaled(Tensor.of(new int[] {7, 8}), 3).toIntArray()).containsExactly(21, 24);
        assertThat(staticTraces).as("another dtype").isEqualTo(3);
        assertThat(scaled(Tensor.of(new float[] {1, 2}), 5).toDoubleArray()).containsExactly(5, 10);
        assertThat(staticTraces).as("another int constant").isEqualTo(4);
        assertThat(scaled(Tensor.of(new float[] {0.5f, 2}), 3).toDoubleArray()).containsExactly(1.5, 6);
        assertThat(scaled(Tensor.of(new int[] {-1, 0}), 3).toIntArray()).containsExactly(-3, 0);
        assertThat(scaled(Tensor.of(new float[] {2, 2}), 5).toDoubleArray()).containsExactly(10, 10);
        assertThat(staticTraces).as("every signature seen before").isEqualTo(4);
    }

    @Test
    void instanceReceiversAreSeparateKeys() {
        Shifter one = new Shifter(1), ten = new Shifter(10);
        Tensor x = Tensor.of(new double[] {1, 2});
        assertThat(one.shifted(x).toDoubleArray()).containsExactly(2, 3);
        assertThat(ten.shifted(x).toDoubleArray()).containsExactly(11, 12);
        assertThat(one.shifted(Tensor.of(new double[] {5, 6})).toDoubleArray()).containsExactly(6, 7);
        assertThat(ten.shifted(Tensor.of(new double[] {5, 6})).toDoubleArray()).containsExactly(15, 16);
        assertThat(one.traces).isEqualTo(1);
        assertThat(ten.traces).isEqualTo(1);
    }

    @Test
    void theLeastRecentlyUsedSignatureIsEvictedBeyondTheLimit() {
        for (int n = 1; n <= LIMIT; n++) {
            lru(Tensor.zeros(DType.F32, n));
        }
        assertThat(lruTraces).isEqualTo(LIMIT);
        assertThat(lru(Tensor.zeros(DType.F32, 1)).toDoubleArray()).containsExactly(1);
        assertThat(lruTraces).as("shape 1 is cached and now the most recently used").isEqualTo(LIMIT);
        lru(Tensor.zeros(DType.F32, LIMIT + 1));
        assertThat(lruTraces).isEqualTo(LIMIT + 1);
        lru(Tensor.zeros(DType.F32, 1));
        lru(Tensor.zeros(DType.F32, 3));
        assertThat(lruTraces).as("shapes 1 and 3 stayed").isEqualTo(LIMIT + 1);
        assertThat(lru(Tensor.zeros(DType.F32, 2)).toDoubleArray()).containsExactly(1, 1);
        assertThat(lruTraces).as("shape 2, the least recently used, was evicted and compiles again")
                .isEqualTo(LIMIT + 2);
    }

    /**
     * Each executable of {@link #identity} holds ~1.4 KiB of heap, so an unbounded cache would grow by ~25 MiB from
     * 2,000 to 20,000 shapes; the shapes {@code [0, n]} hold no data.
     */
    @Test
    void twentyThousandShapesThroughOneMethodKeepItsCacheAtTheLimit() {
        int shapes = 20_000;
        long heapAt2000 = 0;
        for (int n = 1; n <= shapes; n++) {
            identity(Tensor.zeros(DType.F32, 0, n));
            if (n == 2_000) {
                heapAt2000 = usedHeapAfterGc();
            }
        }
        long growth = usedHeapAfterGc() - heapAt2000;
        assertThat(identityTraces).isEqualTo(shapes);
        assertThat(growth).as("heap growth from 2,000 to 20,000 shapes, bytes").isLessThan(4L << 20);
        for (int n = shapes - LIMIT + 1; n <= shapes; n++) {
            identity(Tensor.zeros(DType.F32, 0, n));
        }
        assertThat(identityTraces).as("the last %d shapes are cached", LIMIT).isEqualTo(shapes);
        assertThat(identity(Tensor.zeros(DType.F32, 0, shapes - LIMIT)).shape()).containsExactly(0, shapes - LIMIT);
        assertThat(identityTraces).as("the one before them was evicted").isEqualTo(shapes + 1);
    }

    private static long usedHeapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
