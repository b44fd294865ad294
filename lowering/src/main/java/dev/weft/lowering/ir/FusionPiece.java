package dev.weft.lowering.ir;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One box of a piecewise {@code weft.fusion} argument ({@link StableHlo#FUSION_PIECES}): the argument's elements
 * {@code [at, at + size)} are operand {@code operand}'s elements {@code [from, from + size)}, or, when that operand
 * has rank 0, its one element everywhere in the box (then {@code from} is empty). Arrays are owned by the piece and
 * never written.
 */
public record FusionPiece(int operand, long[] at, long[] from, long[] size) {
    private static final String OPERAND = "operand";
    private static final String AT = "at";
    private static final String FROM = "from";
    private static final String SIZE = "size";

    /** True when the box holds one value (its operand has rank 0) rather than a window of a tensor. */
    public boolean isFill() {
        return from.length == 0;
    }

    /** {@code {operand = 2 : i64, at = array<i64: 0, 1>, from = array<i64: 0, 0>, size = array<i64: 4, 3>}}. */
    public Attr.Dict attr() {
        Map<String, Attr> entries = new LinkedHashMap<>();
        entries.put(OPERAND, Attr.Int.i64(operand));
        entries.put(AT, Attr.I64Array.of(at));
        entries.put(FROM, Attr.I64Array.of(from));
        entries.put(SIZE, Attr.I64Array.of(size));
        return new Attr.Dict(entries);
    }

    /** The piece {@code a} spells, or null when {@code a} is not a dictionary of the four entries. */
    public static FusionPiece of(Attr a) {
        if (a instanceof Attr.Dict d && d.entries().size() == 4 && d.entries().get(OPERAND) instanceof Attr.Int op
                && d.entries().get(AT) instanceof Attr.I64Array at
                && d.entries().get(FROM) instanceof Attr.I64Array from
                && d.entries().get(SIZE) instanceof Attr.I64Array size && op.value() == (int) op.value()) {
            return new FusionPiece((int) op.value(), at.toArray(), from.toArray(), size.toArray());
        }
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FusionPiece p && p.operand == operand && Arrays.equals(p.at, at)
                && Arrays.equals(p.from, from) && Arrays.equals(p.size, size);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new int[] {operand, Arrays.hashCode(at), Arrays.hashCode(from), Arrays.hashCode(size)});
    }

    @Override
    public String toString() {
        return "piece of operand " + operand + " at " + Arrays.toString(at) + " from " + Arrays.toString(from)
                + " size " + Arrays.toString(size);
    }
}
