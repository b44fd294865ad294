package dev.weft.shard;

/**
 * The block layout of a dimension of size {@code dim} split over {@code parts} ranks, the one place that decides it:
 * every block has {@code ceil(dim / parts)} elements except the last ones, which are short (possibly empty). Block
 * {@code i} is {@code [min(i·c, dim), min((i+1)·c, dim))} with {@code c = ceil(dim / parts)}: 10 over 4 is 3, 3,
 * 3, 1; 5 over 4 is 2, 2, 1, 0. So blocks padded to {@code c} and concatenated in rank order hold the dimension as its
 * first {@code dim} elements, which is how a sharded dimension is gathered.
 */
final class Blocks {
    private Blocks() {
    }

    /** The padded block size {@code ceil(dim / parts)}. */
    static long padded(long dim, int parts) {
        return (dim + parts - 1) / parts;
    }

    /** The first index of block {@code index}. */
    static long start(long dim, int parts, int index) {
        return Math.min(index * padded(dim, parts), dim);
    }

    /** The size of block {@code index}. */
    static long size(long dim, int parts, int index) {
        return Math.min((index + 1) * padded(dim, parts), dim) - start(dim, parts, index);
    }
}
