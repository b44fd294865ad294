package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Node;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.CommPrims;
import dev.weft.prim.Prims;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import java.util.ArrayList;
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
 * primitive does when its operands are sharded, as local operations and inserted communication.
 * <ul>
 *   <li>Elementwise: operands are brought to one sharding (per dimension the first operand's axis; a replicated
 *       operand is sliced locally) and the operation runs on blocks: no communication.</li>
 *   <li>Reductions: local reduction, then one {@code allreduce} (of the matching op) over the axes of the reduced
 *       dimensions that were split.</li>
 *   <li>{@code matmul}: batch and free dimensions keep their axes; a split contracted dimension (the other operand
 *       is sliced to match) gives local products summed by one {@code allreduce}.</li>
 *   <li>{@code transpose} permutes the sharding; {@code broadcast_in_dim} keeps the axes of the dimensions it does
 *       not stretch; {@code slice} keeps a split dimension it takes whole (others are gathered first).</li>
 *   <li>Others ({@code reshape}, {@code concat}, {@code pad}, dynamic slices, {@code iota}, {@code fori},
 *       {@code cond}): operands are gathered and the operation runs on whole arrays, its results replicated.</li>
 *   <li>Communication primitives are not shardable: a program on sharded tensors gets its communication from the
 *       partitioner; hand-written communication belongs in programs on {@link Sharding#localBlock}s.</li>
 * </ul>
 */
public final class ShardingRules {
    private static final Map<Primitive<?>, ShardingRule> RULES = new IdentityHashMap<>();
    private static final Map<Primitive<?>, String> NOT_SHARDABLE = new IdentityHashMap<>();

    static {
        for (Primitive<?> p : List.of(Prims.ADD, Prims.SUB, Prims.MUL, Prims.DIV, Prims.POW, Prims.MAX, Prims.MIN,
                Prims.REM, Prims.LT, Prims.LE, Prims.GT, Prims.GE, Prims.EQ, Prims.NE, Prims.NEG, Prims.ABS,
                Prims.EXP, Prims.LOG, Prims.SQRT, Prims.RSQRT, Prims.TANH, Prims.SIN, Prims.COS, Prims.SELECT,
                Prims.CONVERT)) {
            RULES.put(p, ShardingRules::elementwise);
        }
        RULES.put(Prims.REDUCE_SUM, reduction(ReduceOp.SUM));
        RULES.put(Prims.REDUCE_PROD, reduction(ReduceOp.PROD));
        RULES.put(Prims.REDUCE_MAX, reduction(ReduceOp.MAX));
        RULES.put(Prims.REDUCE_MIN, reduction(ReduceOp.MIN));
        RULES.put(Prims.MATMUL, ShardingRules::matmul);
        RULES.put(Prims.TRANSPOSE, ShardingRules::transpose);
        RULES.put(Prims.BROADCAST_IN_DIM, ShardingRules::broadcast);
        RULES.put(Prims.SLICE, ShardingRules::slice);
        for (Primitive<?> p : List.of(Prims.RESHAPE, Prims.CONCAT, Prims.PAD, Prims.DYNAMIC_SLICE,
                Prims.DYNAMIC_UPDATE_SLICE, Prims.IOTA, Prims.CONSTANT, Prims.FORI, Prims.COND)) {
            RULES.put(p, ShardingRules::replicated);
        }
        RULES.put(ShardPrims.CONSTRAIN, ShardingRules::constrain);
        for (Primitive<?> p : List.of(CommPrims.BARRIER, CommPrims.SEND, CommPrims.RECV, CommPrims.ISEND,
                CommPrims.IRECV, CommPrims.WAIT, CommPrims.ALLREDUCE, CommPrims.ALLGATHER,
                CommPrims.REDUCE_SCATTER, CommPrims.BCAST, CommPrims.REDUCE, CommPrims.ALLTOALL, CommPrims.SENDRECV,
                CommPrims.COMM_RANK)) {
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

    private static List<Tensor> elementwise(Node n, List<Tensor> in, Partition p) {
        int rank = n.outputs().getFirst().aval().shape().rank();
        String[] axes = new String[rank];
        Set<String> used = new HashSet<>();
        for (Tensor t : in) {
            Sharding s = p.sharding(t, rank);
            for (int d = 0; d < rank; d++) {
                String a = s.axis(d);
                if (axes[d] == null && a != null && used.add(a)) {
                    axes[d] = a;
                }
            }
        }
        Sharding target = p.sharding(axes);
        List<Tensor> local = new ArrayList<>(in.size());
        for (int k = 0; k < in.size(); k++) {
            local.add(p.input(n, in, k, target));
        }
        return p.bind(n, n.params(), local, List.of(target));
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
        for (int d = 0; d < batch; d++) {
            a[d] = b[d] = pick(used, sa.axis(d), sb.axis(d));
            out.add(a[d]);
        }
        a[ka] = k;
        b[kb] = k;
        if (ra >= 2) {
            a[ra - 2] = pick(used, sa.axis(ra - 2), null);
            out.add(a[ra - 2]);
        }
        if (rb >= 2) {
            b[rb - 1] = pick(used, sb.axis(rb - 1), null);
            out.add(b[rb - 1]);
        }
        Sharding result = p.sharding(out.toArray(String[]::new));
        List<Tensor> local = List.of(p.input(n, in, 0, p.sharding(a)), p.input(n, in, 1, p.sharding(b)));
        Tensor product = p.bind(n, n.params(), local, List.of(result)).getFirst();
        return List.of(p.place(k == null ? product : p.mesh().axisComm(k).allreduce(product, ReduceOp.SUM), result));
    }

    /** The first of {@code candidates} that is an axis not yet {@code used} (then marked used), or null. */
    private static String pick(Set<String> used, String first, String second) {
        for (String a : new String[] {first, second}) {
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
        String[] operand = new String[from.rank()], out = new String[bp.shape().rank()];
        for (int i = 0; i < dims.length; i++) {
            if (from.dim(i) == bp.shape().dim(dims[i])) {
                operand[i] = out[dims[i]] = s.axis(i);
            }
        }
        Sharding result = p.sharding(out);
        Tensor local = p.input(n, in, 0, p.sharding(operand));
        long[] shape = result.localShape(bp.shape().dims());
        return p.bind(n, new BroadcastParams(Shape.of(shape), bp.dims()), List.of(local), List.of(result));
    }

    private static List<Tensor> slice(Node n, List<Tensor> in, Partition p) {
        SliceParams sp = (SliceParams) n.params();
        long[] global = n.inputs().getFirst().aval().shape().dims();
        long[] start = sp.startArray(), limit = sp.limitArray();
        Sharding s = p.sharding(in.getFirst(), global.length);
        String[] axes = new String[global.length];
        for (int d = 0; d < global.length; d++) {
            if (start[d] == 0 && limit[d] == global[d]) {
                axes[d] = s.axis(d);
            }
        }
        Sharding kept = p.sharding(axes);
        Tensor local = p.input(n, in, 0, kept);
        long[] localLimit = limit.clone();
        long[] shape = local.shape();
        for (int d = 0; d < global.length; d++) {
            if (axes[d] != null) {
                localLimit[d] = shape[d];
            }
        }
        SliceParams params = new SliceParams(boxed(start), boxed(localLimit));
        return p.bind(n, params, List.of(local), List.of(kept));
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

    private static List<Tensor> constrain(Node n, List<Tensor> in, Partition p) {
        return List.of(p.input(n, in, 0, ((ConstrainParams) n.params()).sharding()));
    }

    private static List<Long> boxed(long[] values) {
        List<Long> out = new ArrayList<>(values.length);
        for (long v : values) {
            out.add(v);
        }
        return Collections.unmodifiableList(out);
    }
}
