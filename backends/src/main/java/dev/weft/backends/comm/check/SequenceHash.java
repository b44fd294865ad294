package dev.weft.backends.comm.check;

/**
 * A polynomial hash of a sequence of 64-bit element keys, {@code sum key[k] * B^(length-1-k)} modulo 2^64, kept
 * with its length so that sequences concatenate and repeat without being unrolled: a loop of {@code n} trips
 * hashes as its body repeated, in O(log n), and equals the same operations written out.
 */
public record SequenceHash(long hash, long length) {
    public static final SequenceHash EMPTY = new SequenceHash(0, 0);
    private static final long BASE = 0x9E3779B97F4A7C15L;

    /** The sequence of one element {@code key}. */
    public static SequenceHash of(long key) {
        return new SequenceHash(key, 1);
    }

    /** This sequence followed by {@code next}. */
    public SequenceHash then(SequenceHash next) {
        return new SequenceHash(hash * power(next.length) + next.hash, length + next.length);
    }

    /** This sequence {@code times} times over. */
    public SequenceHash repeat(long times) {
        SequenceHash result = EMPTY;
        SequenceHash square = this;
        for (long n = times; n > 0; n >>>= 1) {
            if ((n & 1) != 0) {
                result = result.then(square);
            }
            square = square.then(square);
        }
        return result;
    }

    private static long power(long exponent) {
        long result = 1;
        long b = BASE;
        for (long e = exponent; e > 0; e >>>= 1) {
            if ((e & 1) != 0) {
                result *= b;
            }
            b *= b;
        }
        return result;
    }

    /** A well-mixed hash of {@code values} (SplitMix64's finaliser after each). */
    public static long mix(long... values) {
        long h = 0x243F6A8885A308D3L;
        for (long v : values) {
            h += v + 0x9E3779B97F4A7C15L;
            h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
            h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
            h ^= h >>> 31;
        }
        return h;
    }
}
