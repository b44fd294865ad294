package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.ControlFlow;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.CommPrims;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.CondParams;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.LoopParams;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.prim.ReshapeParams;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Bind;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Sharding propagation per primitive, one entry each (beside the autodiff rules of {@code dev.weft.ad}): what a
 * primitive does when its operands are sharded, as local operations and inserted communication (forward), and for
 * elementwise operations, reductions, {@code matmul}, {@code transpose}, {@code broadcast_in_dim} and constraints,
 * the layout its inputs are wanted in when its output is wanted in one ({@link ShardingWant}, backward: propagated
 * from each {@code Sharding.constrain} up to the operands, which the elementwise and matmul rules then weigh).
 * <ul>
 *   <li>Elementwise: operands are brought to one sharding, the cheapest to reach ({@link Partition#cheapest}:
 *       the elements received to reshard the operands and the result's wanted layout; a replicated operand is
 *       sliced locally, for free) and the operation runs on blocks.</li>
 *   <li>Reductions: local reduction, then one {@code allreduce} (of the matching op) over the axes of the reduced
 *       dimensions that were split.</li>
 *   <li>{@code matmul}: batch and free dimensions keep their axes (a replicated one takes the axis the result is
 *       wanted split over there: the operand is sliced before the product); a split contracted dimension (the
 *       other operand is sliced to match) gives local products summed by one {@code allreduce}, or by one {@code reduceScatter}
 *       when the product's only use is a constraint that splits it over that axis.</li>
 *   <li>{@code transpose} permutes the sharding; {@code broadcast_in_dim} keeps the axes of the dimensions it does
 *       not stretch (and a replicated broadcast that an operation needs split is redone at the block's shape, not
 *       sliced from the whole).</li>
 *   <li>{@code slice}, {@code pad}, {@code concat} keep the sharding; along a split dimension each rank fetches the
 *       elements of its block of the result from the ranks holding them ({@link Halo}: for a stencil's shifts, a
 *       halo exchange with the neighbours).</li>
 *   <li>{@code fori}: the body is partitioned with the carries laid out as on entry; each step's new carries are
 *       resharded to that layout.</li>
 *   <li>{@code cond} (its predicate is a scalar, so the same on every rank): both branches are partitioned on the
 *       operands' layouts; the results take the true branch's layouts, the false branch's are resharded to
 *       them.</li>
 *   <li>{@code reshape}: a split dimension stays split where its blocks are whole runs of the merged or split
 *       dimension it becomes (it leads its group of dimensions and the blocks line up, e.g. {@code [8,4] -> [32]}
 *       or {@code [6,4] -> [6,2,2]} split by rows): a local reshape of the block; otherwise gathered.</li>
 *   <li>Others (dynamic slices, {@code iota}, constants): operands are gathered and the operation runs on whole
 *       arrays, its results replicated.</li>
 *   <li>Communication primitives are not shardable: a program on sharded tensors gets its communication from the
 *       partitioner; hand-written communication belongs in programs on {@link Sharding#localBlock}s.</li>
 * </ul>
 */
public final class ShardingRules {
    private static final Map<Primitive<?>, ShardingRule> RULES = new IdentityHashMap<>();
    private static final Map<Primitive<?>, String> NOT_SHARDABLE = new IdentityHashMap<>();
    private static final Map<Primitive<?>, ShardingWant> WANTS = new IdentityHashMap<>();

    static {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            Primitive<?> p = op.primitive();
            RULES.put(p, ShardingRules::elementwise);
            WANTS.put(p, ShardingRules::elementwiseWant);
        }
        RULES.put(Prims.REDUCE_SUM, reduction(ReduceOp.SUM));
        RULES.put(Prims.REDUCE_PROD, reduction(ReduceOp.PROD));
        RULES.put(Prims.REDUCE_MAX, reduction(ReduceOp.MAX));
        RULES.put(Prims.REDUCE_MIN, reduction(ReduceOp.MIN));
        for (Primitive<?> p : List.of(Prims.REDUCE_SUM, Prims.REDUCE_PROD, Prims.REDUCE_MAX, Prims.REDUCE_MIN)) {
            WANTS.put(p, ShardingRules::reductionWant);
        }
        RULES.put(Prims.MATMUL, ShardingRules::matmul);
        WANTS.put(Prims.MATMUL, ShardingRules::matmulWant);
        RULES.put(Prims.TRANSPOSE, ShardingRules::transpose);
        WANTS.put(Prims.TRANSPOSE, ShardingRules::transposeWant);
        RULES.put(Prims.BROADCAST_IN_DIM, ShardingRules::broadcast);
        WANTS.put(Prims.BROADCAST_IN_DIM, ShardingRules::broadcastWant);
        RULES.put(Prims.SLICE, ShardingRules::slice);
        RULES.put(Prims.PAD, ShardingRules::pad);
        RULES.put(Prims.CONCAT, ShardingRules::concat);
        RULES.put(Prims.FORI, ShardingRules::fori);
        RULES.put(Prims.RESHAPE, ShardingRules::reshape);
        RULES.put(Prims.COND, ShardingRules::cond);
        RULES.put(Prims.WHILE, ShardingRules::whileLoop);
        // the custom rules were applied when the program was traced: partitioned, the function is its body
        for (Primitive<?> p : List.of(Prims.CUSTOM_JVP_CALL, Prims.CUSTOM_VJP_CALL)) {
            RULES.put(p, (n, in, part) -> part.evaluate(((CustomCallParams) n.params()).body(), in));
        }
        for (Primitive<?> p : List.of(Prims.DYNAMIC_SLICE, Prims.DYNAMIC_UPDATE_SLICE, Prims.IOTA,
                Prims.CONSTANT)) {
            RULES.put(p, ShardingRules::replicated);
        }
        RULES.put(ShardPrims.CONSTRAIN, ShardingRules::constrain);
        WANTS.put(ShardPrims.CONSTRAIN, (n, out) -> List.of(((ConstrainParams) n.params()).sharding()));
        for (Primitive<?> p : CommPrims.ALL) {
            NOT_SHARDABLE.put(p, "communication: a program on sharded tensors gets its communication from the"
                    + " partitioner; write hand-made communication on Sharding.localBlock(t) instead");
        }
    }

    private ShardingRules() {
    }

    /** Whether {@code p} has a sharding rule. */
    public static boolean has(Primitive<?> p) {
        return RULES.containsKey(p);
    }

    /** Why {@code p} cannot be partitioned, when it is marked so. */
    public static Optional<String> whyNotShardable(Primitive<?> p) {
        return Optional.ofNullable(NOT_SHARDABLE.get(p));
    }

    static ShardingRule rule(Primitive<?> p) {
        return RULES.get(p);
    }

    /** The backward rule of {@code p}, or {@code null} when its inputs' layouts are not derived from its output's. */
    static ShardingWant want(Primitive<?> p) {
        return WANTS.get(p);
    }

    /**
     * Operands are brought to the cheapest of the candidate layouts ({@link Partition#cheapest}): per dimension the
     * first operand's axis, each operand's own layout, and the layout the result is wanted in.
     */
    private static List<Tensor> elementwise(Node n, List<Tensor> in, Partition p) {
        Sharding target = p.cheapest(n, in);
        List<Tensor> local = new ArrayList<>(in.size());
        for (int k = 0; k < in.size(); k++) {
            local.add(p.input(n, in, k, target));
        }
        return p.bind(n, n.params(), local, List.of(target));
    }

    private static List<Sharding> elementwiseWant(Node n, Sharding out) {
        return n.inputs().stream().map(v -> v.aval().shape().rank() == out.rank() ? out : null).toList();
    }

    /** The kept dimensions keep the wanted axes; the reduced ones are wanted whole (they are summed locally). */
    private static List<Sharding> reductionWant(Node n, Sharding out) {
        int rank = n.inputs().getFirst().aval().shape().rank();
        List<Integer> reduced = ((AxesParams) n.params()).axes();
        String[] axes = new String[rank];
        for (int d = 0, k = 0; d < rank; d++) {
            axes[d] = reduced.contains(d) ? null : out.axis(k++);
        }
        return List.of(Sharding.of(out.mesh(), axes));
    }

    private static List<Sharding> transposeWant(Node n, Sharding out) {
        int[] perm = ((TransposeParams) n.params()).toArray();
        String[] axes = new String[perm.length];
        for (int i = 0; i < perm.length; i++) {
            axes[perm[i]] = out.axis(i);
        }
        return List.of(Sharding.of(out.mesh(), axes));
    }

    /** The operand keeps the axes of the dimensions the broadcast does not stretch. */
    private static List<Sharding> broadcastWant(Node n, Sharding out) {
        BroadcastParams bp = (BroadcastParams) n.params();
        Shape from = n.inputs().getFirst().aval().shape();
        int[] dims = bp.dimsArray();
        String[] axes = new String[from.rank()];
        for (int i = 0; i < dims.length; i++) {
            if (from.dim(i) == bp.shape().dim(dims[i])) {
                axes[i] = out.axis(dims[i]);
            }
        }
        return List.of(Sharding.of(out.mesh(), axes));
    }

    private static ShardingRule reduction(ReduceOp op) {
        return (n, in, p) -> {
            int rank = n.inputs().getFirst().aval().shape().rank();
            Sharding s = p.sharding(in.getFirst(), rank);
            List<Integer> reduced = ((AxesParams) n.params()).axes();
            Set<String> over = new LinkedHashSet<>();
            List<String> kept = new ArrayList<>();
            for (int d = 0; d < rank; d++) {
                if (!reduced.contains(d)) {
                    kept.add(s.axis(d));
                } else if (s.axis(d) != null) {
                    over.add(s.axis(d));
                }
            }
            Sharding out = p.sharding(kept.toArray(String[]::new));
            Tensor local = p.bind(n, n.params(), List.of(in.getFirst()), List.of(out)).getFirst();
            Mesh mesh = p.mesh();
            if (over.size() == mesh.axes().size() && over.size() > 1) {
                local = mesh.comm().allreduce(local, op);
            } else {
                for (String a : over) {
                    local = mesh.axisComm(a).allreduce(local, op);
                }
            }
            return List.of(p.place(local, out));
        };
    }

    private static List<Tensor> matmul(Node n, List<Tensor> in, Partition p) {
        int ra = n.inputs().get(0).aval().shape().rank(), rb = n.inputs().get(1).aval().shape().rank();
        Sharding sa = p.sharding(in.get(0), ra), sb = p.sharding(in.get(1), rb);
        int ka = ra - 1, kb = rb == 1 ? 0 : rb - 2;
        Set<String> used = new HashSet<>();
        String k = pick(used, sa.axis(ka), sb.axis(kb));
        int batch = Math.max(ra, rb) > 2 ? ra - 2 : 0;
        String[] a = new String[ra], b = new String[rb];
        List<String> out = new ArrayList<>();
        Sharding want = p.wanted(n.outputs().getFirst());
        for (int d = 0; d < batch; d++) {
            a[d] = b[d] = pick(used, sa.axis(d), sb.axis(d), axis(want, d));
            out.add(a[d]);
        }
        a[ka] = k;
        b[kb] = k;
        if (ra >= 2) {
            a[ra - 2] = pick(used, sa.axis(ra - 2), axis(want, out.size()));
            out.add(a[ra - 2]);
        }
        if (rb >= 2) {
            b[rb - 1] = pick(used, sb.axis(rb - 1), axis(want, out.size()));
            out.add(b[rb - 1]);
        }
        Sharding result = p.sharding(out.toArray(String[]::new));
        List<Tensor> local = List.of(p.input(n, in, 0, p.sharding(a)), p.input(n, in, 1, p.sharding(b)));
        Tensor product = p.bind(n, n.params(), local, List.of(result)).getFirst();
        if (k != null && p.defers(n)) {
            return List.of(p.pending(product, result, k));
        }
        return List.of(p.place(k == null ? product : p.mesh().axisComm(k).allreduce(product, ReduceOp.SUM), result));
    }

    /** The axis of dimension {@code dim} in {@code s}, or {@code null} when {@code s} is. */
    private static String axis(Sharding s, int dim) {
        return s == null ? null : s.axis(dim);
    }

    /**
     * A product's free and batch dimensions keep the axes its result is wanted split over; the contracted ones are
     * wanted whole (an operand already split there still contracts locally, see {@link #matmul}).
     */
    private static List<Sharding> matmulWant(Node n, Sharding out) {
        int ra = n.inputs().get(0).aval().shape().rank(), rb = n.inputs().get(1).aval().shape().rank();
        int batch = Math.max(ra, rb) > 2 ? ra - 2 : 0;
        String[] a = new String[ra], b = new String[rb];
        for (int d = 0; d < batch; d++) {
            a[d] = b[d] = out.axis(d);
        }
        if (ra >= 2) {
            a[ra - 2] = out.axis(batch);
        }
        if (rb >= 2) {
            b[rb - 1] = out.axis(out.rank() - 1);
        }
        return List.of(Sharding.of(out.mesh(), a), Sharding.of(out.mesh(), b));
    }

    /** The first of {@code candidates} that is an axis not yet {@code used} (then marked used), or null. */
    private static String pick(Set<String> used, String... candidates) {
        for (String a : candidates) {
            if (a != null && used.add(a)) {
                return a;
            }
        }
        return null;
    }

    private static List<Tensor> transpose(Node n, List<Tensor> in, Partition p) {
        int[] perm = ((TransposeParams) n.params()).toArray();
        Sharding s = p.sharding(in.getFirst(), perm.length);
        String[] out = new String[perm.length];
        for (int i = 0; i < perm.length; i++) {
            out[i] = s.axis(perm[i]);
        }
        return p.bind(n, n.params(), in, List.of(p.sharding(out)));
    }

    private static List<Tensor> broadcast(Node n, List<Tensor> in, Partition p) {
        BroadcastParams bp = (BroadcastParams) n.params();
        Shape from = n.inputs().getFirst().aval().shape();
        int[] dims = bp.dimsArray();
        Sharding s = p.sharding(in.getFirst(), from.rank());
        String[] out = new String[bp.shape().rank()];
        for (int i = 0; i < dims.length; i++) {
            if (from.dim(i) == bp.shape().dim(dims[i])) {
                out[dims[i]] = s.axis(i);
            }
        }
        Tensor result = broadcastTo(n, in.getFirst(), p.sharding(out), p);
        p.broadcast(result, n, in.getFirst());
        return List.of(result);
    }

    /** The {@code broadcast_in_dim} {@code node} of {@code operand} (a local block) made directly as {@code target}. */
    static Tensor broadcastTo(Node node, Tensor operand, Sharding target, Partition p) {
        BroadcastParams bp = (BroadcastParams) node.params();
        Tensor local = p.reshard(operand, node.inputs().getFirst().aval(), broadcastWant(node, target).getFirst());
        long[] shape = target.localShape(bp.shape().dims());
        return p.bind(node, new BroadcastParams(Shape.of(shape), bp.dims()), List.of(local), List.of(target))
                .getFirst();
    }

    /**
     * A slice keeps the operand's sharding: along a split dimension, each rank's block of the result is fetched from
     * the ranks holding it ({@link Halo}: the neighbours, for a stencil's shifts).
     */
    private static List<Tensor> slice(Node n, List<Tensor> in, Partition p) {
        SliceParams sp = (SliceParams) n.params();
        long[] global = n.inputs().getFirst().aval().shape().dims();
        long[] start = sp.startArray(), limit = sp.limitArray();
        Sharding s = p.sharding(in.getFirst(), global.length);
        Tensor local = in.getFirst();
        long[] localStart = start.clone(), localLimit = limit.clone();
        for (int d = 0; d < global.length; d++) {
            String a = s.axis(d);
            if (a == null) {
                continue;
            }
            if (start[d] != 0 || limit[d] != global[d]) {
                long m = limit[d] - start[d], offset = start[d];
                Mesh mesh = p.mesh();
                int parts = mesh.size(a);
                local = Halo.fetch(local, d, global[d], mesh, a, j -> shifted(Halo.block(m, parts, j), offset));
            }
            localStart[d] = 0;
            localLimit[d] = local.shape()[d];
        }
        return p.bind(n, new SliceParams(boxed(localStart), boxed(localLimit)), List.of(local), List.of(s));
    }

    /**
     * A pad keeps the operand's sharding: along a split dimension, each rank fetches the operand's elements that its
     * block of the result holds and pads what falls outside them locally.
     */
    private static List<Tensor> pad(Node n, List<Tensor> in, Partition p) {
        PadParams pp = (PadParams) n.params();
        long[] global = n.inputs().getFirst().aval().shape().dims();
        long[] lo = pp.lowArray(), hi = pp.highArray();
        Sharding s = p.sharding(in.getFirst(), global.length);
        Tensor local = in.getFirst();
        long[] localLo = lo.clone(), localHi = hi.clone();
        for (int d = 0; d < global.length; d++) {
            String a = s.axis(d);
            if (a == null || lo[d] == 0 && hi[d] == 0) {
                continue;
            }
            long m = global[d] + lo[d] + hi[d], low = lo[d];
            Mesh mesh = p.mesh();
            int parts = mesh.size(a);
            long[] mine = Halo.block(m, parts, mesh.coordinate(a));
            local = Halo.fetch(local, d, global[d], mesh, a, j -> shifted(Halo.block(m, parts, j), -low));
            localLo[d] = Math.clamp(low - mine[0], 0, mine[1] - mine[0]);
            localHi[d] = mine[1] - mine[0] - localLo[d] - local.shape()[d];
        }
        PadParams params = new PadParams(boxed(localLo), boxed(localHi), pp.value());
        return p.bind(n, params, List.of(local), List.of(s));
    }

    /**
     * A concatenation: the operands are brought to one sharding (the cheapest, as for elementwise operations, the
     * concatenated dimension included); along a split concatenated dimension each rank fetches, from each operand, the part its
     * block of the result holds.
     */
    private static List<Tensor> concat(Node n, List<Tensor> in, Partition p) {
        int axis = ((ConcatParams) n.params()).axis();
        Sharding target = p.cheapest(n, in);
        List<Tensor> local = new ArrayList<>(in.size());
        for (int k = 0; k < in.size(); k++) {
            local.add(p.input(n, in, k, target));
        }
        String a = target.axis(axis);
        if (a == null) {
            return p.bind(n, n.params(), local, List.of(target));
        }
        Mesh mesh = p.mesh();
        int parts = mesh.size(a);
        long m = n.outputs().getFirst().aval().shape().dim(axis);
        List<Tensor> pieces = new ArrayList<>();
        long offset = 0;
        for (int k = 0; k < in.size(); k++) {
            long size = n.inputs().get(k).aval().shape().dim(axis), off = offset;
            Tensor piece = Halo.fetch(local.get(k), axis, size, mesh, a, j -> shifted(Halo.block(m, parts, j), -off));
            if (piece.shape()[axis] > 0 || pieces.isEmpty() && k == in.size() - 1) {
                pieces.add(piece);
            }
            offset += size;
        }
        return List.of(p.place(pieces.size() == 1 ? pieces.getFirst()
                : Bind.bindAt(n.location(), n.prim(), n.params(), pieces).getFirst(), target));
    }

    /** {@code range} moved by {@code offset}. */
    private static long[] shifted(long[] range, long offset) {
        return new long[] {range[0] + offset, range[1] + offset};
    }

    private static List<Tensor> fori(Node n, List<Tensor> in, Partition p) {
        LoopParams lp = (LoopParams) n.params();
        Region body = lp.body();
        int count = body.results().size();
        List<Sharding> carried = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            carried.add(p.sharding(in.get(k), n.inputs().get(k).aval().shape().rank()));
        }
        List<Tensor> captures = in.subList(count, in.size());
        for (int k = 0; k < count; k++) {
            p.want(body.results().get(k), carried.get(k));
        }
        List<Tensor> out = ControlFlow.fori(lp.lo(), lp.hi(), in.subList(0, count), (i, carries) -> {
            List<Tensor> args = new ArrayList<>(in.size() + 1);
            args.add(i);
            for (int k = 0; k < count; k++) {
                args.add(p.place(carries.get(k), carried.get(k)));
            }
            args.addAll(captures);
            List<Tensor> results = p.evaluate(body, args);
            List<Tensor> next = new ArrayList<>(count);
            for (int k = 0; k < count; k++) {
                next.add(p.reshard(results.get(k), body.results().get(k).aval(), carried.get(k)));
            }
            return next;
        }, n.location());
        List<Tensor> placed = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            placed.add(p.place(out.get(k), carried.get(k)));
        }
        return placed;
    }

    /** A while loop keeps each carry laid out as it enters, as {@code fori} does; the condition reads them so. */
    private static List<Tensor> whileLoop(Node n, List<Tensor> in, Partition p) {
        WhileParams wp = (WhileParams) n.params();
        int count = wp.body().results().size();
        List<Sharding> carried = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            carried.add(p.sharding(in.get(k), n.inputs().get(k).aval().shape().rank()));
        }
        List<Tensor> captures = in.subList(count, in.size());
        for (int k = 0; k < count; k++) {
            p.want(wp.body().results().get(k), carried.get(k));
        }
        java.util.function.Function<List<Tensor>, List<Tensor>> placedArgs = carries -> {
            List<Tensor> args = new ArrayList<>(in.size());
            for (int k = 0; k < count; k++) {
                args.add(p.place(carries.get(k), carried.get(k)));
            }
            args.addAll(captures);
            return args;
        };
        List<Tensor> out = ControlFlow.whileLoop(carries -> p.evaluate(wp.cond(), placedArgs.apply(carries))
                .getFirst(), carries -> {
                    List<Tensor> results = p.evaluate(wp.body(), placedArgs.apply(carries));
                    List<Tensor> next = new ArrayList<>(count);
                    for (int k = 0; k < count; k++) {
                        next.add(p.reshard(results.get(k), wp.body().results().get(k).aval(), carried.get(k)));
                    }
                    return next;
                }, in.subList(0, count), n.location());
        List<Tensor> placed = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            placed.add(p.place(out.get(k), carried.get(k)));
        }
        return placed;
    }

    /**
     * A reshape keeps a split dimension split when, in the group of dimensions it is reshaped with (the shortest
     * runs of input and output dimensions of equal element counts), it is the first input dimension and each rank's
     * block is the same run of elements as its block of the group's first output dimension; the block is then
     * reshaped locally. Any other split dimension is gathered first.
     */
    private static List<Tensor> reshape(Node n, List<Tensor> in, Partition p) {
        long[] from = n.inputs().getFirst().aval().shape().dims();
        long[] to = ((ReshapeParams) n.params()).shape().dims();
        Sharding s = p.sharding(in.getFirst(), from.length);
        String[] keep = new String[from.length], out = new String[to.length];
        Mesh mesh = p.mesh();
        for (int[] g : reshapeGroups(from, to)) {
            for (int d = g[0]; d < g[1]; d++) {
                String a = s.axis(d);
                if (a != null && d == g[0] && g[2] < g[3] && sameBlocks(from, g[0], g[1], to, g[2], g[3],
                        mesh.size(a))) {
                    keep[d] = a;
                    out[g[2]] = a;
                }
            }
        }
        Sharding target = p.sharding(out);
        Tensor local = p.input(n, in, 0, p.sharding(keep));
        ReshapeParams params = new ReshapeParams(Shape.of(target.localShape(to)));
        return p.bind(n, params, List.of(local), List.of(target));
    }

    /**
     * The groups of a reshape from {@code from} to {@code to}: {@code {inStart, inEnd, outStart, outEnd}}, the
     * shortest runs of dimensions with equal element counts, in order. A zero-sized shape is one group.
     */
    private static List<int[]> reshapeGroups(long[] from, long[] to) {
        List<int[]> groups = new ArrayList<>();
        if (Arrays.stream(from).anyMatch(d -> d == 0)) {
            groups.add(new int[] {0, from.length, 0, to.length});
            return groups;
        }
        int i = 0, j = 0;
        while (i < from.length || j < to.length) {
            int i0 = i, j0 = j;
            long a = i < from.length ? from[i++] : 1, b = j < to.length ? to[j++] : 1;
            while (a != b) {
                if (a < b) {
                    a *= from[i++];
                } else {
                    b *= to[j++];
                }
            }
            groups.add(new int[] {i0, i, j0, j});
        }
        return groups;
    }

    /**
     * Whether, split over {@code parts} ranks, every block of dimension {@code from[i0]} (leading input dimensions
     * {@code [i0, i1)}) is the same run of the group's elements as the block of {@code to[j0]} (leading
     * {@code [j0, j1)}).
     */
    private static boolean sameBlocks(long[] from, int i0, int i1, long[] to, int j0, int j1, int parts) {
        long innerFrom = 1, innerTo = 1;
        for (int d = i0 + 1; d < i1; d++) {
            innerFrom *= from[d];
        }
        for (int d = j0 + 1; d < j1; d++) {
            innerTo *= to[d];
        }
        for (int k = 0; k < parts; k++) {
            if (Blocks.start(from[i0], parts, k) * innerFrom != Blocks.start(to[j0], parts, k) * innerTo
                    || Blocks.size(from[i0], parts, k) * innerFrom != Blocks.size(to[j0], parts, k) * innerTo) {
                return false;
            }
        }
        return true;
    }

    /**
     * Both branches partitioned on the operands' layouts (the predicate is a scalar, alike on every rank, so every
     * rank takes the same branch and its communication matches). {@link ControlFlow#cond} traces the true branch
     * first: its results' layouts are the cond's, and the false branch's results are resharded to them.
     */
    private static List<Tensor> cond(Node n, List<Tensor> in, Partition p) {
        CondParams cp = (CondParams) n.params();
        List<Tensor> operands = in.subList(1, in.size());
        List<Sharding> layouts = new ArrayList<>();
        List<Tensor> out = ControlFlow.cond(in.getFirst(), () -> {
            List<Tensor> results = p.evaluate(cp.onTrue(), operands);
            for (int k = 0; k < results.size(); k++) {
                layouts.add(p.sharding(results.get(k), cp.onTrue().results().get(k).aval().shape().rank()));
            }
            return results;
        }, () -> {
            List<Tensor> results = p.evaluate(cp.onFalse(), operands);
            List<Tensor> moved = new ArrayList<>(results.size());
            for (int k = 0; k < results.size(); k++) {
                moved.add(p.reshard(results.get(k), cp.onFalse().results().get(k).aval(), layouts.get(k)));
            }
            return moved;
        }, n.location());
        List<Tensor> placed = new ArrayList<>(out.size());
        for (int k = 0; k < out.size(); k++) {
            placed.add(p.place(out.get(k), layouts.get(k)));
        }
        return placed;
    }

    private static List<Tensor> replicated(Node n, List<Tensor> in, Partition p) {
        List<Tensor> whole = new ArrayList<>(in.size());
        for (int k = 0; k < in.size(); k++) {
            whole.add(p.input(n, in, k, Sharding.replicated(p.mesh(), n.inputs().get(k).aval().shape().rank())));
        }
        List<Sharding> out = n.outputs().stream()
                .map(v -> Sharding.replicated(p.mesh(), v.aval().shape().rank())).toList();
        return p.bind(n, n.params(), whole, out);
    }

    /**
     * A constraint reshards its operand. A pending sum (a {@code matmul} with a split contracted dimension used only
     * here) that the constraint splits over the summed axis becomes one {@code reduceScatter}, else an
     * {@code allreduce} first.
     */
    private static List<Tensor> constrain(Node n, List<Tensor> in, Partition p) {
        Sharding target = ((ConstrainParams) n.params()).sharding();
        Tensor t = in.getFirst();
        String axis = p.pendingSum(t);
        if (axis != null) {
            Var v = n.inputs().getFirst();
            Sharding s = p.sharding(t, v.aval().shape().rank());
            int dim = target.axes().indexOf(axis);
            if (dim >= 0 && s.axis(dim) == null) {
                String[] axes = s.axes().toArray(String[]::new);
                axes[dim] = axis;
                t = p.place(Reshard.reduceScatter(t, dim, v.aval().shape().dim(dim), p.mesh(), axis),
                        p.sharding(axes));
            } else {
                t = p.place(p.mesh().axisComm(axis).allreduce(t, ReduceOp.SUM), s);
            }
        }
        return List.of(p.input(n, List.of(t), 0, target));
    }

    private static List<Long> boxed(long[] values) {
        List<Long> out = new ArrayList<>(values.length);
        for (long v : values) {
            out.add(v);
        }
        return Collections.unmodifiableList(out);
    }
}
