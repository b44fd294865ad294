package dev.weft.backends.comm.check;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A repeated block hashes as the same elements written out, and order matters. */
class SequenceHashTest {
    private static SequenceHash written(long[] keys, int times) {
        SequenceHash h = SequenceHash.EMPTY;
        for (int t = 0; t < times; t++) {
            for (long k : keys) {
                h = h.then(SequenceHash.of(k));
            }
        }
        return h;
    }

    @Test
    void aRepeatedBlockEqualsItsUnrolledElements() {
        long[] body = {SequenceHash.mix(1), SequenceHash.mix(2), SequenceHash.mix(3)};
        for (int times : new int[] {0, 1, 2, 7, 64, 1000}) {
            assertThat(written(body, 1).repeat(times)).isEqualTo(written(body, times));
        }
        SequenceHash six = SequenceHash.of(SequenceHash.mix(9)).repeat(6);
        SequenceHash three = SequenceHash.of(SequenceHash.mix(9)).repeat(3);
        assertThat(three.then(three)).isEqualTo(six);
    }

    @Test
    void orderAndCountChangeTheHash() {
        SequenceHash a = SequenceHash.of(SequenceHash.mix(1));
        SequenceHash b = SequenceHash.of(SequenceHash.mix(2));
        assertThat(a.then(b)).isNotEqualTo(b.then(a));
        assertThat(a.repeat(3)).isNotEqualTo(a.repeat(4));
    }
}
