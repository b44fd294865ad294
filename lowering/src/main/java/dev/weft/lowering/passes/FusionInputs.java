package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The {@code slice}s (unit stride), {@code concatenate}s and edge-only {@code pad}s of a block that fusions absorb,
 * and what a fusion input made by them reads instead: boxes of the values they start from, and of pad values.
 * An op is absorbed ("dissolved") when its result is a nonempty ranked tensor and every op using it is a fusion
 * member or another dissolved op, so it is never materialised; one used anywhere else stays, and fusions read it
 * whole.
 */
final class FusionInputs {
    /**
     * Elements {@code [at, at + size)} of an input are {@code source}'s elements {@code [from, from + size)}, or
     * {@code source}'s one element when it has rank 0 ({@code from} is then empty).
     */
    record Box(Value source, long[] at, long[] from, long[] size) {
        boolean isFill() {
            return from.length == 0;
        }
    }

    private final Map<Value, Op> producer;
    private final Set<Op> dissolved;

    private FusionInputs(Map<Value, Op> producer, Set<Op> dissolved) {
        this.producer = producer;
        this.dissolved = dissolved;
    }

    /** Inputs read as they are: nothing dissolves. */
    static FusionInputs none() {
        return new FusionInputs(Map.of(), Set.of());
    }

    /**
     * The dissolved ops among {@code ops} (a block in program order), where {@code producer} and {@code users} map
     * the block's values to the ops defining and using them and {@code isFused} tells the ops that become part of
     * a fusion. Decided from the last op back, so that an op's users are decided before it.
     */
    static FusionInputs of(List<Op> ops, Map<Value, Op> producer, Map<Value, List<Op>> users,
                           Predicate<Op> isFused) {
        Set<Op> dissolved = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Op op : ops.reversed()) {
            if (isDissolvable(op)) {
                List<Op> uses = users.getOrDefault(op.result(), List.of());
                if (!uses.isEmpty() && uses.stream().allMatch(u -> dissolved.contains(u) || isFused.test(u))) {
                    dissolved.add(op);
                }
            }
        }
        return new FusionInputs(producer, dissolved);
    }

    boolean isDissolved(Op op) {
        return dissolved.contains(op);
    }

    /** True if fusions read {@code input} through dissolved ops rather than as it is. */
    boolean isDissolved(Value input) {
        Op p = producer.get(input);
        return p != null && dissolved.contains(p);
    }

    /** Boxes that partition {@code input} (ranked and nonempty when dissolved), in no particular order. */
    List<Box> boxes(Value input) {
        long[] shape = input.tensorType().shape().dims();
        List<Box> out = new ArrayList<>();
        collect(input, new long[shape.length], shape, new long[shape.length], out);
        return out;
    }

    /** Appends the boxes of {@code v}'s window {@code [start, start + size)}, placed at {@code at} of the input. */
    private void collect(Value v, long[] start, long[] size, long[] at, List<Box> out) {
        Op p = producer.get(v);
        if (p == null || !dissolved.contains(p)) {
            out.add(new Box(v, at, start, size));
            return;
        }
        switch (p.name()) {
            case StableHlo.SLICE -> collect(p.operand(0), plus(start, p.longs("start_indices")), size, at, out);
            case StableHlo.CONCATENATE -> {
                int axis = (int) ((Attr.Int) p.attr("dimension")).value();
                long offset = 0;
                for (Value piece : p.operands()) {
                    long length = piece.tensorType().shape().dim(axis);
                    long lo = Math.max(start[axis], offset);
                    long hi = Math.min(start[axis] + size[axis], offset + length);
                    if (lo < hi) {
                        collect(piece, with(start, axis, lo - offset), with(size, axis, hi - lo),
                                with(at, axis, at[axis] + lo - start[axis]), out);
                    }
                    offset += length;
                }
            }
            case StableHlo.PAD -> pad(p, start, size, at, out);
            default -> throw new IllegalStateException("cannot dissolve " + p.name());
        }
    }

    /**
     * The part of the window inside {@code pad}'s operand comes from it; the rest is the padding value, as slabs:
     * along each axis in turn, the parts below and above the operand, limited to the operand's extent on the axes
     * before it.
     */
    private void pad(Op pad, long[] start, long[] size, long[] at, List<Box> out) {
        long[] low = pad.longs("edge_padding_low");
        long[] dims = pad.operand(0).tensorType().shape().dims();
        int rank = start.length;
        long[] lo = new long[rank];
        long[] hi = new long[rank];
        boolean overlaps = true;
        for (int k = 0; k < rank; k++) {
            lo[k] = Math.max(start[k], low[k]);
            hi[k] = Math.min(start[k] + size[k], low[k] + dims[k]);
            overlaps &= lo[k] < hi[k];
        }
        Value fill = pad.operand(1);
        if (!overlaps) {
            out.add(new Box(fill, at, new long[0], size));
            return;
        }
        long[] inside = new long[rank];
        long[] placed = new long[rank];
        long[] extent = new long[rank];
        for (int k = 0; k < rank; k++) {
            inside[k] = lo[k] - low[k];
            placed[k] = at[k] + lo[k] - start[k];
            extent[k] = hi[k] - lo[k];
        }
        collect(pad.operand(0), inside, extent, placed, out);
        long[] slabStart = start.clone();
        long[] slabEnd = plus(start, size);
        for (int k = 0; k < rank; k++) {
            if (slabStart[k] < lo[k]) {
                out.add(slab(fill, slabStart, with(slabEnd, k, lo[k]), start, at));
            }
            if (hi[k] < slabEnd[k]) {
                out.add(slab(fill, with(slabStart, k, hi[k]), slabEnd, start, at));
            }
            slabStart[k] = lo[k];
            slabEnd[k] = hi[k];
        }
    }

    /** The box of {@code fill} over {@code [from, to)} of a window starting at {@code start}, placed at {@code at}. */
    private static Box slab(Value fill, long[] from, long[] to, long[] start, long[] at) {
        long[] place = new long[from.length];
        long[] size = new long[from.length];
        for (int k = 0; k < from.length; k++) {
            place[k] = at[k] + from[k] - start[k];
            size[k] = to[k] - from[k];
        }
        return new Box(fill, place, new long[0], size);
    }

    /** Slices of unit stride, concatenations and pads without interior padding, of nonempty ranked results. */
    private static boolean isDissolvable(Op op) {
        boolean shaped = op.results().size() == 1 && op.result().type() instanceof TensorType t
                && t.shape().rank() > 0 && t.shape().size() > 0;
        return shaped && switch (op.name()) {
            case StableHlo.SLICE -> op.operands().size() == 1
                    && op.attr("strides") instanceof Attr.I64Array strides
                    && strides.values().stream().allMatch(s -> s == 1)
                    && op.attr("start_indices") instanceof Attr.I64Array;
            case StableHlo.CONCATENATE -> !op.operands().isEmpty() && op.attr("dimension") instanceof Attr.Int;
            case StableHlo.PAD -> op.operands().size() == 2
                    && op.attr("interior_padding") instanceof Attr.I64Array interior
                    && interior.values().stream().allMatch(p -> p == 0)
                    && op.attr("edge_padding_low") instanceof Attr.I64Array;
            default -> false;
        };
    }

    private static long[] plus(long[] a, long[] b) {
        long[] out = a.clone();
        for (int k = 0; k < out.length; k++) {
            out[k] += b[k];
        }
        return out;
    }

    private static long[] with(long[] a, int k, long value) {
        long[] out = a.clone();
        out[k] = value;
        return out;
    }
}
