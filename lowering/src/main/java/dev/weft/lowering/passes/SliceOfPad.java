package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code slice-of-pad} pass: {@code slice(pad(x))} becomes {@code pad(slice(x))}, the window of {@code x} that
 * the slice keeps, padded where the window reaches into the padding. The large pad then keeps only its other users
 * (fusions read it piecewise instead of copying it, as a stencil's shifted windows do), and the window costs only
 * its own elements: a halo row cut from a padded grid (as partitioned global programs send) no longer makes the
 * whole grid be copied every step. Strided slices, interior padding and windows that hold no element of {@code x}
 * are left as they are. Run before {@code dce}, which drops a pad left without users.
 */
public final class SliceOfPad implements Pass {
    @Override
    public String name() {
        return "slice-of-pad";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Map<Value, Op> producer = new IdentityHashMap<>();
            IrWalk.forEachOp(f.body(), op -> op.results().forEach(v -> producer.put(v, op)));
            rewrite(f.body(), producer, new IdentityHashMap<>());
        }
    }

    private static void rewrite(Block b, Map<Value, Op> producer, Map<Value, Value> substitution) {
        List<Op> out = new ArrayList<>(b.ops().size());
        for (Op op : b.ops()) {
            Uses.replace(op, substitution);
            op.regions().forEach(r -> rewrite(r, producer, substitution));
            Op pad = op.name().equals(StableHlo.SLICE) ? producer.get(op.operand(0)) : null;
            List<Op> window = pad != null && pad.name().equals(StableHlo.PAD) ? window(op, pad) : null;
            if (window == null) {
                out.add(op);
                continue;
            }
            out.addAll(window);
            substitution.put(op.result(), window.getLast().result());
        }
        b.ops().clear();
        b.ops().addAll(out);
    }

    /** The ops computing {@code slice}'s result from the pad's operand, or null to keep the slice. */
    private static List<Op> window(Op slice, Op pad) {
        long[] start = slice.longs("start_indices"), limit = slice.longs("limit_indices");
        long[] low = pad.longs("edge_padding_low"), high = pad.longs("edge_padding_high");
        long[] interior = pad.attr("interior_padding") == null ? new long[low.length] : pad.longs("interior_padding");
        if (slice.attr("strides") != null && !allEqual(slice.longs("strides"), 1) || !allEqual(interior, 0)) {
            return null;
        }
        Value x = pad.operand(0);
        TensorType type = x.tensorType();
        long[] dims = type.shape().dims();
        long[] from = new long[dims.length], to = new long[dims.length];
        long[] before = new long[dims.length], after = new long[dims.length];
        boolean whole = true, padded = false;
        for (int d = 0; d < dims.length; d++) {
            if (low[d] < 0 || high[d] < 0) {
                return null;
            }
            from[d] = Math.max(start[d], low[d]) - low[d];
            to[d] = Math.min(limit[d], low[d] + dims[d]) - low[d];
            if (to[d] <= from[d]) {
                return null;
            }
            before[d] = Math.max(0, Math.min(limit[d], low[d]) - start[d]);
            after[d] = Math.max(0, limit[d] - Math.max(start[d], low[d] + dims[d]));
            whole &= from[d] == 0 && to[d] == dims[d];
            padded |= before[d] > 0 || after[d] > 0;
        }
        List<Op> ops = new ArrayList<>(2);
        Value kept = x;
        if (!whole) {
            long[] size = new long[dims.length];
            for (int d = 0; d < dims.length; d++) {
                size[d] = to[d] - from[d];
            }
            long[] ones = new long[dims.length];
            Arrays.fill(ones, 1);
            Op cut = new Op(StableHlo.SLICE, List.of(x), List.of(TensorType.of(type.dtype(), size)),
                    attrs("start_indices", from, "limit_indices", to, "strides", ones), List.of(), slice.location());
            ops.add(cut);
            kept = cut.result();
        }
        if (padded) {
            ops.add(new Op(StableHlo.PAD, List.of(kept, pad.operand(1)), List.of(slice.result().type()),
                    attrs("edge_padding_low", before, "edge_padding_high", after, "interior_padding",
                            new long[dims.length]), List.of(), slice.location()));
        }
        return ops.isEmpty() ? null : ops;
    }

    static Map<String, Attr> attrs(String k1, long[] v1, String k2, long[] v2, String k3, long[] v3) {
        Map<String, Attr> a = new LinkedHashMap<>();
        a.put(k1, Attr.I64Array.of(v1));
        a.put(k2, Attr.I64Array.of(v2));
        a.put(k3, Attr.I64Array.of(v3));
        return a;
    }

    private static boolean allEqual(long[] values, long v) {
        for (long x : values) {
            if (x != v) {
                return false;
            }
        }
        return true;
    }
}
