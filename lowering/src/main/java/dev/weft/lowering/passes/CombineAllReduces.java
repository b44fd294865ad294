package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Effect;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code combine-allreduces} pass (after XLA's AllReduceCombiner and PyTorch DDP's gradient buckets): in every
 * block, blocking {@code allreduce}s with a built-in reduce op on the same communicator, of one dtype, none depending
 * on another's result, fuse into buckets of at most {@link #bucketBytes} bytes each; one larger than the member limit
 * ({@link #DEFAULT_MEMBER_BYTES}) stays a call of its own. A bucket of two or more becomes
 * one nonblocking collective: its operands flattened and concatenated, an {@code iallreduce} start, its wait, and a
 * slice (reshaped back) per member. Buckets are formed in the order their operands become ready (a backward pass
 * makes the last layer's gradients first), each start placed as soon as its operands are computed, each wait as late
 * as the computation that does not need it allows, so that computation and the later buckets' starts run while the
 * transfer progresses ({@code overlap-comm} then widens the window where other effects allow).
 *
 * <p>Only allreduces between the same two other ops with effects (or the block's ends) combine, and nothing moves past
 * such an op, so communication other than these allreduces keeps its order. The buckets depend only on the module,
 * never on the rank, so every rank fuses identically and the ranks' collectives still match. Custom reduce ops, empty
 * tensors and allreduces already threaded by {@code thread-tokens} (which this pass precedes) are left alone.
 */
public final class CombineAllReduces implements Pass {
    /**
     * The default bucket cap, PyTorch DDP's 25 MiB. Measured on the 784-512-512-10 MLP training step (3.2 MB of
     * allreduced cotangents a step, batch 128 per rank, f32) with 2 Open MPI ranks on a shared 2-core machine (load
     * 4 to 9): no cap from 256 KiB to 25 MiB, nor running without the pass, was faster beyond the noise (medians
     * favoured 25 MiB over no fusion, 51 against 73 ms in one series; minima favoured no fusion, 18.5 against
     * 23.8 ms, in another), so the cap stays DDP's.
     */
    public static final long DEFAULT_BUCKET_BYTES = 25L << 20;

    /**
     * The largest allreduce that joins a bucket: a larger one costs more to copy into the bucket and its result out
     * of it than it saves in latency, so it stays a call of its own (DDP's buckets are views of one gradient buffer;
     * ours are copies). In that MLP step, bucketing the 1.6 MB and 1 MB weight gradients made their slices out of
     * the bucket cost 0.2 to 2.7 ms a step each (fresh pages), against 0.1 ms for the whole of the small ones' bucket.
     */
    public static final long DEFAULT_MEMBER_BYTES = 256L << 10;

    private final long bucketBytes;
    private final long memberBytes;

    /** The pass with the {@link #DEFAULT_BUCKET_BYTES} cap. */
    public CombineAllReduces() {
        this(DEFAULT_BUCKET_BYTES);
    }

    /**
     * The pass fusing allreduces into buckets of at most {@code bucketBytes} bytes (an allreduce larger than the cap
     * stays alone).
     */
    public CombineAllReduces(long bucketBytes) {
        this(bucketBytes, DEFAULT_MEMBER_BYTES);
    }

    /** The pass with a bucket cap of {@code bucketBytes}, fusing only allreduces of at most {@code memberBytes}. */
    public CombineAllReduces(long bucketBytes, long memberBytes) {
        if (bucketBytes <= 0 || memberBytes <= 0) {
            throw new IllegalArgumentException("bucket cap and member limit must be positive, got " + bucketBytes
                    + " and " + memberBytes);
        }
        this.bucketBytes = bucketBytes;
        this.memberBytes = memberBytes;
    }

    /** The cap on a bucket's bytes. */
    public long bucketBytes() {
        return bucketBytes;
    }

    @Override
    public String name() {
        return "combine-allreduces";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            combine(f.body(), f.body());
        }
    }

    /** What must agree for two allreduces to share a bucket. */
    private record Key(String callPrefix, Effect effect, ReduceOp op, DType dtype) {
    }

    /** A fusable allreduce: its op, position in the block, and where its operand is ready. */
    private record Candidate(Op op, int index, int ready, Key key, long bytes) {
        Value operand() {
            return op.operand(0);
        }
    }

    private void combine(Block block, Block function) {
        for (Op op : block.ops()) {
            for (Block r : op.regions()) {
                combine(r, function);
            }
        }
        List<Op> ops = block.ops();
        int lo = 0;
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            boolean bound = Effects.isTerminator(op) || (Effects.hasEffect(op) && key(op) == null);
            if (bound) {
                combineSegment(ops, lo, i, function);
                lo = i + 1;
            }
        }
        combineSegment(ops, lo, ops.size(), function);
    }

    /**
     * The descriptor of {@code op} when it is a blocking {@code allreduce} custom call of one operand and one result,
     * as lowered (no token yet); else null.
     */
    static CommOp.AllReduce blockingAllreduce(Op op) {
        return op.name().equals(StableHlo.CUSTOM_CALL) && op.operands().size() == 1 && op.results().size() == 1
                && op.attr("backend_config") instanceof Attr.CommConfig c && c.op() instanceof CommOp.AllReduce a
                && op.attr("call_target_name") instanceof Attr.Str target
                && target.value().endsWith(CommOp.Kind.ALLREDUCE.label()) ? a : null;
    }

    /** The key of a fusable allreduce, or null. */
    private static Key key(Op op) {
        CommOp.AllReduce a = blockingAllreduce(op);
        if (a == null || a.op().isCustom() || !(op.operand(0).type() instanceof TensorType t)
                || t.shape().size() == 0) {
            return null;
        }
        String target = ((Attr.Str) op.attr("call_target_name")).value();
        String prefix = target.substring(0, target.length() - CommOp.Kind.ALLREDUCE.label().length());
        return new Key(prefix, op.effect(), a.op(), t.dtype());
    }

    /** Fuses the allreduces among {@code ops[lo, hi)}, where every op with an effect is a fusable allreduce. */
    private void combineSegment(List<Op> ops, int lo, int hi, Block function) {
        Map<Op, Integer> position = new IdentityHashMap<>();
        Map<Value, Op> definer = new IdentityHashMap<>();
        for (int i = lo; i < hi; i++) {
            position.put(ops.get(i), i);
            for (Value v : ops.get(i).results()) {
                definer.put(v, ops.get(i));
            }
        }
        List<Candidate> candidates = new ArrayList<>();
        for (int i = lo; i < hi; i++) {
            Op op = ops.get(i);
            Key key = key(op);
            if (key != null) {
                Op def = definer.get(op.operand(0));
                candidates.add(new Candidate(op, i, def == null ? lo - 1 : position.get(def), key,
                        op.operand(0).tensorType().byteSize()));
            }
        }
        if (candidates.size() < 2) {
            return;
        }
        List<List<Candidate>> buckets = buckets(candidates, dependencies(ops, lo, hi, candidates));
        if (buckets.isEmpty()) {
            return;
        }
        List<Op> scheduled = new Scheduler(ops, lo, hi, buckets, definer, function).run();
        List<Op> range = ops.subList(lo, hi);
        range.clear();
        range.addAll(scheduled);
    }

    /**
     * For each value defined in the segment (and each candidate's result), the candidates whose results it depends
     * on, directly or through others.
     */
    private static Map<Value, BitSet> dependencies(List<Op> ops, int lo, int hi, List<Candidate> candidates) {
        Map<Op, Integer> candidateIndex = new IdentityHashMap<>();
        for (int k = 0; k < candidates.size(); k++) {
            candidateIndex.put(candidates.get(k).op(), k);
        }
        Map<Value, BitSet> deps = new IdentityHashMap<>();
        for (int i = lo; i < hi; i++) {
            Op op = ops.get(i);
            Set<Value> used = new HashSet<>();
            op.collectUses(used);
            BitSet d = new BitSet();
            for (Value v : used) {
                BitSet dv = deps.get(v);
                if (dv != null) {
                    d.or(dv);
                }
            }
            Integer k = candidateIndex.get(op);
            if (k != null) {
                d.set(k);
            }
            for (Value r : op.results()) {
                deps.put(r, d);
            }
        }
        return deps;
    }

    /**
     * The buckets of two or more candidates, formed in the order the candidates' operands become ready: a bucket
     * closes when the next candidate has another key, would pass the cap, or depends on a member's result. Since each
     * bucket holds a run of that order, a later bucket never feeds an earlier one.
     */
    private List<List<Candidate>> buckets(List<Candidate> candidates, Map<Value, BitSet> deps) {
        List<Candidate> byReady = new ArrayList<>(candidates);
        byReady.sort(Comparator.comparingInt(Candidate::ready).thenComparingInt(Candidate::index));
        Map<Op, Integer> number = new IdentityHashMap<>();
        for (int k = 0; k < candidates.size(); k++) {
            number.put(candidates.get(k).op(), k);
        }
        List<List<Candidate>> out = new ArrayList<>();
        List<Candidate> open = new ArrayList<>();
        BitSet members = new BitSet();
        long bytes = 0;
        for (Candidate c : byReady) {
            if (c.bytes() > memberBytes) {
                continue;
            }
            BitSet operandDeps = deps.getOrDefault(c.operand(), new BitSet());
            boolean fits = !open.isEmpty() && open.getFirst().key().equals(c.key())
                    && bytes + c.bytes() <= bucketBytes && !operandDeps.intersects(members);
            if (!fits) {
                if (open.size() > 1) {
                    out.add(open);
                }
                open = new ArrayList<>();
                members = new BitSet();
                bytes = 0;
            }
            open.add(c);
            members.set(number.get(c.op()));
            bytes += c.bytes();
        }
        if (open.size() > 1) {
            out.add(open);
        }
        return out;
    }

    /**
     * Reorders a segment with its buckets fused: a list schedule over the segment's ops (the fused allreduces
     * removed) and each bucket's start and wait. Of the nodes whose inputs are computed it emits the next bucket's
     * start first, else the op earliest in the original order, else the earliest bucket's wait; so starts run as
     * early and waits as late as the data allow, and a segment without buckets would keep its order.
     */
    private static final class Scheduler {
        private final List<Op> ops;
        private final int lo;
        private final int hi;
        private final List<List<Candidate>> buckets;
        private final Map<Value, Op> definer;
        private final Block function;
        private final Map<Op, Integer> bucketOf = new IdentityHashMap<>();
        private final List<Op> out = new ArrayList<>();
        /** Per node, the nodes that wait for it; nodes are ops' positions, then 2 per bucket (start, wait). */
        private final List<List<Integer>> users = new ArrayList<>();
        private final int[] pending;
        private final Value[] concatenated;
        private final Value[] requests;

        Scheduler(List<Op> ops, int lo, int hi, List<List<Candidate>> buckets, Map<Value, Op> definer, Block function) {
            this.ops = ops;
            this.lo = lo;
            this.hi = hi;
            this.buckets = buckets;
            this.definer = definer;
            this.function = function;
            for (int b = 0; b < buckets.size(); b++) {
                for (Candidate c : buckets.get(b)) {
                    bucketOf.put(c.op(), b);
                }
            }
            int nodes = (hi - lo) + 2 * buckets.size();
            for (int n = 0; n < nodes; n++) {
                users.add(new ArrayList<>());
            }
            pending = new int[nodes];
            concatenated = new Value[buckets.size()];
            requests = new Value[buckets.size()];
        }

        private int startNode(int bucket) {
            return (hi - lo) + 2 * bucket;
        }

        private int waitNode(int bucket) {
            return startNode(bucket) + 1;
        }

        private void edge(int from, int to) {
            if (from >= 0) {
                users.get(from).add(to);
                pending[to]++;
            }
        }

        List<Op> run() {
            Map<Op, Integer> local = new IdentityHashMap<>();
            for (int i = lo; i < hi; i++) {
                local.put(ops.get(i), i - lo);
            }
            for (int i = lo; i < hi; i++) {
                Op op = ops.get(i);
                if (bucketOf.containsKey(op)) {
                    continue;
                }
                Set<Value> used = new HashSet<>();
                op.collectUses(used);
                for (int p : producersOf(used, local)) {
                    edge(p, i - lo);
                }
            }
            for (int b = 0; b < buckets.size(); b++) {
                Set<Value> operands = new HashSet<>();
                buckets.get(b).forEach(c -> operands.add(c.operand()));
                for (int p : producersOf(operands, local)) {
                    edge(p, startNode(b));
                }
                if (b > 0) {
                    edge(startNode(b - 1), startNode(b));
                }
                edge(startNode(b), waitNode(b));
            }
            TreeSet<Integer> readyOps = new TreeSet<>();
            TreeSet<Integer> readyStarts = new TreeSet<>();
            TreeSet<Integer> readyWaits = new TreeSet<>();
            for (int i = lo; i < hi; i++) {
                if (!bucketOf.containsKey(ops.get(i)) && pending[i - lo] == 0) {
                    readyOps.add(i - lo);
                }
            }
            for (int b = 0; b < buckets.size(); b++) {
                if (pending[startNode(b)] == 0) {
                    readyStarts.add(b);
                }
            }
            int emitted = 0;
            int total = (hi - lo) - bucketOf.size() + 2 * buckets.size();
            while (emitted < total) {
                int node;
                if (!readyStarts.isEmpty()) {
                    int b = readyStarts.pollFirst();
                    emitStart(b);
                    node = startNode(b);
                } else if (!readyOps.isEmpty()) {
                    node = readyOps.pollFirst();
                    out.add(ops.get(lo + node));
                } else if (!readyWaits.isEmpty()) {
                    int b = readyWaits.pollFirst();
                    emitWait(b);
                    node = waitNode(b);
                } else {
                    throw new IllegalStateException("combine-allreduces: the buckets' dependencies form a cycle");
                }
                emitted++;
                for (int u : users.get(node)) {
                    if (--pending[u] == 0) {
                        if (u < hi - lo) {
                            readyOps.add(u);
                        } else if ((u - (hi - lo)) % 2 == 0) {
                            readyStarts.add((u - (hi - lo)) / 2);
                        } else {
                            readyWaits.add((u - (hi - lo)) / 2);
                        }
                    }
                }
            }
            return out;
        }

        /** The distinct nodes producing {@code values}, in ascending order (so that edges are deterministic). */
        private List<Integer> producersOf(Set<Value> values, Map<Op, Integer> local) {
            TreeSet<Integer> nodes = new TreeSet<>();
            for (Value v : values) {
                Op def = definer.get(v);
                if (def != null) {
                    Integer b = bucketOf.get(def);
                    nodes.add(b != null ? waitNode(b) : local.get(def));
                }
            }
            return List.copyOf(nodes);
        }

        /** Flattens and concatenates the bucket's operands and starts their allreduce. */
        private void emitStart(int b) {
            List<Candidate> bucket = buckets.get(b);
            Candidate first = bucket.getFirst();
            DType dtype = first.key().dtype();
            List<Value> flat = new ArrayList<>();
            long total = 0;
            for (Candidate c : bucket) {
                TensorType t = c.operand().tensorType();
                flat.add(reshape(c.operand(), TensorType.of(dtype, t.shape().size()), c.op()));
                total += t.shape().size();
            }
            TensorType all = TensorType.of(dtype, total);
            Op concat = new Op(StableHlo.CONCATENATE, flat, List.of(all), Map.of("dimension", Attr.Int.i64(0)),
                    List.of(), first.op().location());
            out.add(concat);
            concatenated[b] = concat.result();
            CommOp.AllReduce blocking = (CommOp.AllReduce) ((Attr.CommConfig) first.op().attr("backend_config")).op();
            CommOp.IAllReduce start = new CommOp.IAllReduce(blocking.comm(), blocking.op());
            Op startOp = commCall(first, start, List.of(concat.result()), TensorType.of(CommPrims.REQUEST), all);
            out.add(startOp);
            requests[b] = startOp.result();
        }

        /** Waits for the bucket's allreduce and gives each member's result its slice of it. */
        private void emitWait(int b) {
            List<Candidate> bucket = buckets.get(b);
            Candidate first = bucket.getFirst();
            TensorType all = concatenated[b].tensorType();
            CommOp.AllReduce blocking = (CommOp.AllReduce) ((Attr.CommConfig) first.op().attr("backend_config")).op();
            Op wait = commCall(first, new CommOp.CollectiveWait(new CommOp.IAllReduce(blocking.comm(), blocking.op())),
                    List.of(requests[b], concatenated[b]), all, all);
            out.add(wait);
            long offset = 0;
            for (Candidate c : bucket) {
                TensorType t = c.op().result().tensorType();
                long n = t.shape().size();
                Map<String, Attr> attrs = new LinkedHashMap<>();
                attrs.put("start_indices", Attr.I64Array.of(offset));
                attrs.put("limit_indices", Attr.I64Array.of(offset + n));
                attrs.put("strides", Attr.I64Array.of(1L));
                Op slice = new Op(StableHlo.SLICE, List.of(wait.result()), List.of(TensorType.of(t.dtype(), n)), attrs,
                        List.of(), c.op().location());
                out.add(slice);
                Value result = reshape(slice.result(), t, c.op());
                Value old = c.op().result();
                IrWalk.forEachOp(function, op -> op.replaceOperand(old, result));
                offset += n;
            }
        }

        /** {@code v} as {@code type}: itself when it has that shape, else a new reshape emitted here. */
        private Value reshape(Value v, TensorType type, Op at) {
            if (v.tensorType().equals(type)) {
                return v;
            }
            Op r = new Op(StableHlo.RESHAPE, List.of(v), List.of(type), Map.of(), List.of(), at.location());
            out.add(r);
            return r.result();
        }

        /** A communication custom call like {@code like}'s (target prefix, effect, location) for {@code op}. */
        private static Op commCall(Candidate like, CommOp op, List<Value> operands, TensorType result, TensorType data) {
            Map<String, Attr> attrs = new LinkedHashMap<>();
            attrs.put("call_target_name", new Attr.Str(like.key().callPrefix() + op.kind().label()));
            attrs.put("has_side_effect", new Attr.Bool(true));
            attrs.put("api_version", Attr.Int.i32(4));
            attrs.put("backend_config", new Attr.CommConfig(op, data.aval()));
            return new Op(StableHlo.CUSTOM_CALL, operands, List.of(result), attrs, List.of(), like.op().location(),
                    like.op().effect());
        }
    }
}
