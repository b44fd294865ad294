package dev.weft.it.random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.Tensor;
import dev.weft.random.Key;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link Key}: Threefry-2x32 against Random123's known-answer vectors (the ones JAX tests too), split keys distinct,
 * the same numbers for the same key whatever else was drawn, and the moments of uniform, normal and bernoulli draws.
 */
class KeyTest {
    @Test
    void threefryMatchesTheKnownAnswers() {
        int[][] cases = {
            {0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
            {-1, -1, -1, -1, 0x1cb996fc, 0xbb002be7},
            {0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0}};
        for (int[] c : cases) {
            int[] out = threefry(new Key(c[0], c[1]), c[2], c[3]);
            assertThat(out).containsExactly(c[4], c[5]);
        }
    }

    /** The block function of {@code key} at the counter {@code (x0, x1)} (package-private, reached reflectively). */
    private static int[] threefry(Key key, int x0, int x1) {
        try {
            var m = Key.class.getDeclaredMethod("threefry", int.class, int.class, int[].class);
            m.setAccessible(true);
            int[] out = new int[2];
            m.invoke(key, x0, x1, out);
            return out;
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void drawsDependOnlyOnTheKeyAndTheShape() {
        Key k = Key.of(42);
        List<Key> keys = k.split(4);
        Set<Key> distinct = new HashSet<>(keys);
        distinct.add(k);
        assertThat(distinct).hasSize(5);
        assertThat(keys.get(2).uniform(DType.F32, 3, 2).toFloatArray())
                .containsExactly(k.split(4).get(2).uniform(DType.F32, 3, 2).toFloatArray());
        assertThat(Key.of(42).split(2)).isNotEqualTo(Key.of(43).split(2));
        assertThat(Key.of(7).normal(DType.F64, 5).dtype()).isEqualTo(DType.F64);
    }

    @Test
    void momentsAreThoseOfTheDistributions() {
        int n = 200_000;
        double[] u = Key.of(1).uniform(DType.F64, n).toDoubleArray();
        double mean = 0, sq = 0;
        for (double v : u) {
            assertThat(v).isBetween(0.0, 1.0).isLessThan(1.0);
            mean += v / n;
            sq += v * v / n;
        }
        assertThat(mean).isCloseTo(0.5, within(0.005));
        assertThat(sq - mean * mean).isCloseTo(1 / 12.0, within(0.002));
        double[] z = Key.of(2).normal(DType.F64, n).toDoubleArray();
        double zm = 0, zv = 0;
        for (double v : z) {
            zm += v / n;
            zv += v * v / n;
        }
        assertThat(zm).isCloseTo(0, within(0.01));
        assertThat(zv).isCloseTo(1, within(0.02));
        boolean[] b = Key.of(3).bernoulli(0.3, n).toBooleanArray();
        int ones = 0;
        for (boolean v : b) {
            ones += v ? 1 : 0;
        }
        assertThat(ones / (double) n).isCloseTo(0.3, within(0.005));
        assertThatThrownBy(() -> Key.of(1).uniform(DType.I32, 2)).isInstanceOf(DTypeException.class)
                .hasMessageStartingWith("KeyTest.java:");
    }
}
