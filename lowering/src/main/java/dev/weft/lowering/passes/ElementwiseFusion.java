package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.FusionPiece;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.Shape;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.SequencedSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code fuse-elementwise} pass: groups of two or more connected elementwise ops of one result shape become
 * one {@code weft.fusion} op, placed where the group's last op was. Its region takes the group's external inputs
 * and returns every group value used outside the group. A {@code broadcast_in_dim} of a rank-0 value joins the
 * group of the elementwise op that uses it, so the region takes the scalar and a broadcast scalar is never
 * materialised at full size (unless an op that is not elementwise uses it). A broadcast scalar that several
 * elementwise ops use (common subexpressions merged them: relu's zero in every layer) is first copied for each of
 * them, so that no fusion hands another a tensor of one repeated value.
 *
 * <p>Groups grow in program order: an op joins the groups of its operands' producers when no op outside the
 * group between them uses a group value (so that moving the group to its last op keeps every use after its
 * definition). Groups never span an op with an effect, so the order of effects is unchanged. Fusion looks
 * inside {@code while} and {@code if} bodies, not inside reductions' combiners.
 *
 * <p>With {@link Inputs#VIEWS} (a target whose fused loops read strided inputs, the CPU's), unit-stride
 * {@code slice}s, {@code concatenate}s and edge-only {@code pad}s whose results only fusions (or other such ops) use
 * are absorbed as well ({@link FusionInputs}): an input that is a window of one value becomes a view of it
 * ({@link StableHlo#FUSION_SLICE_STARTS}); one assembled from several values and pad values becomes piecewise
 * ({@link StableHlo#FUSION_PIECES}), its sources joining the fusion's operands. Either way nothing is copied before
 * the fusion runs.
 */
public final class ElementwiseFusion implements Pass {
    /** What a fusion's executor can read as an input. */
    public enum Inputs {
        /** Only whole values: slices, concatenations and pads stay ops of their own. */
        WHOLE,
        /** Strided windows of values, and inputs assembled piecewise from several values and pads. */
        VIEWS
    }

    private static final Set<String> NESTED = Set.of(StableHlo.WHILE, StableHlo.IF);
    /**
     * The most ops one fusion holds. A CPU fusion becomes one generated method of about 26 bytes of bytecode per
     * op: HotSpot leaves methods over 8000 bytes to the interpreter and the JVM rejects them over 64 KiB, so a long
     * chain (a Java loop unrolled while tracing) is cut into fusions of this size.
     */
    static final int MAX_MEMBERS = 256;
    private final Inputs inputs;

    /** The pass for a target whose fusions read {@code inputs}. */
    public ElementwiseFusion(Inputs inputs) {
        this.inputs = inputs;
    }

    @Override
    public String name() {
        return "fuse-elementwise";
    }

    @Override
    public void run(Module m) {
        boolean views = inputs == Inputs.VIEWS;
        for (Func f : m.functions()) {
            fuse(f.body(), views);
        }
    }

    private static void fuse(Block b, boolean views) {
        for (Op op : b.ops()) {
            if (NESTED.contains(op.name())) {
                op.regions().forEach(r -> fuse(r, views));
            }
        }
        unshareScalarBroadcasts(b);
        Map<Op, Integer> position = new IdentityHashMap<>();
        Map<Value, Op> producer = new IdentityHashMap<>();
        Map<Value, List<Op>> users = new IdentityHashMap<>();
        for (int k = 0; k < b.ops().size(); k++) {
            Op op = b.ops().get(k);
            position.put(op, k);
            op.results().forEach(v -> producer.put(v, op));
            recordUses(op, users);
        }
        Map<Op, Group> groupOf = new IdentityHashMap<>();
        int run = 0;
        for (Op op : b.ops()) {
            if (Effects.hasEffect(op)) {
                run++;
            } else if (isFusible(op)) {
                Group group = new Group(op, run);
                for (Op user : users.getOrDefault(op.result(), List.of())) {
                    group.outsideUsers.add(position.get(user));
                }
                groupOf.put(op, group);
                int at = position.get(op);
                for (Value v : op.operands()) {
                    Group candidate = groupOf.get(producer.get(v));
                    if (candidate != null && candidate != group && candidate.run == run
                            && candidate.shape().equals(group.shape())
                            && candidate.ops.size() + group.ops.size() <= MAX_MEMBERS
                            && isConvex(group, candidate, at, b.ops(), groupOf)) {
                        group = merge(group, candidate, op, at, groupOf);
                    }
                }
            }
        }
        rebuild(b, groupOf, users, producer, views);
    }

    /**
     * Gives each elementwise op of {@code b} that uses a broadcast scalar of {@code b} which has other uses a copy
     * of its own, placed just before it; the last user keeps the original.
     */
    private static void unshareScalarBroadcasts(Block b) {
        Map<Value, Integer> uses = new IdentityHashMap<>();
        Map<Value, Op> broadcast = new IdentityHashMap<>();
        for (Op op : b.ops()) {
            IrWalk.forEachOp(op, o -> o.operands().forEach(v -> uses.merge(v, 1, Integer::sum)));
            if (isScalarBroadcast(op)) {
                broadcast.put(op.result(), op);
            }
        }
        List<Op> ops = new ArrayList<>(b.ops().size());
        for (Op op : b.ops()) {
            if (isFusible(op) && !isScalarBroadcast(op)) {
                for (int i = 0; i < op.operands().size(); i++) {
                    Op shared = broadcast.get(op.operand(i));
                    if (shared != null && uses.get(shared.result()) > 1) {
                        uses.merge(shared.result(), -1, Integer::sum);
                        Op copy = new Op(shared.name(), shared.operands(), List.of(shared.result().type()),
                                shared.attributes(), List.of(), shared.location());
                        ops.add(copy);
                        op.operands().set(i, copy.result());
                    }
                }
            }
            ops.add(op);
        }
        b.ops().clear();
        b.ops().addAll(ops);
    }

    /**
     * A set of ops to fuse, with the positions of the ops that use its values and were outside it when they were
     * added (some may have joined since). Merging keeps the larger group's sets, so building groups costs
     * O(n log² n) however widely values are used.
     */
    private static final class Group {
        final Set<Op> ops = Collections.newSetFromMap(new IdentityHashMap<>());
        final NavigableSet<Integer> outsideUsers = new TreeSet<>();
        Op last;
        final int run;

        Group(Op last, int run) {
            this.last = last;
            this.run = run;
            ops.add(last);
        }

        Shape shape() {
            return last.result().tensorType().shape();
        }
    }

    /**
     * The union of {@code a} and {@code b}, ending at {@code last} (at position {@code at}); {@code groupOf} is
     * updated. Users up to {@code at} are dropped: the groups were convex, so those users are now members.
     */
    private static Group merge(Group a, Group b, Op last, int at, Map<Op, Group> groupOf) {
        Group big = a.ops.size() >= b.ops.size() ? a : b;
        Group small = big == a ? b : a;
        big.ops.addAll(small.ops);
        small.ops.forEach(member -> groupOf.put(member, big));
        big.outsideUsers.addAll(small.outsideUsers);
        big.outsideUsers.headSet(at, true).clear();
        big.last = last;
        return big;
    }

    private static boolean isFusible(Op op) {
        return (op.elementwise() != null || isScalarBroadcast(op)) && op.results().size() == 1
                && op.regions().isEmpty();
    }

    private static boolean isScalarBroadcast(Op op) {
        return op.name().equals(StableHlo.BROADCAST_IN_DIM) && op.operands().size() == 1
                && op.operand(0).type() instanceof TensorType t && t.shape().rank() == 0;
    }

    /** True if no op outside {@code a} and {@code b} at or before {@code at} uses a value of either. */
    private static boolean isConvex(Group a, Group b, int at, List<Op> ops, Map<Op, Group> groupOf) {
        for (Group g : List.of(a, b)) {
            for (int user : g.outsideUsers.headSet(at, true)) {
                Group owner = groupOf.get(ops.get(user));
                if (owner != a && owner != b) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Records, for each operand of {@code owner} and of ops nested in it, that {@code owner} uses it. */
    private static void recordUses(Op owner, Map<Value, List<Op>> users) {
        IrWalk.forEachOp(owner, op -> op.operands().forEach(v -> users.computeIfAbsent(v, x -> new ArrayList<>()).add(owner)));
    }

    /** Rebuilds {@code b} with its groups fused, absorbing into them what {@link FusionInputs} dissolves. */
    private static void rebuild(Block b, Map<Op, Group> groupOf, Map<Value, List<Op>> users,
                                Map<Value, Op> producer, boolean views) {
        List<Op> old = List.copyOf(b.ops());
        Map<Group, List<Op>> members = new IdentityHashMap<>();
        for (Op op : old) {
            Group g = groupOf.get(op);
            if (g != null) {
                members.computeIfAbsent(g, x -> new ArrayList<>()).add(op);
            }
        }
        FusionInputs inputs = views ? FusionInputs.of(old, producer, users, op -> groupOf.containsKey(op)
                && groupOf.get(op).ops.size() >= 2) : FusionInputs.none();
        Map<Value, Value> substitution = new IdentityHashMap<>();
        b.ops().clear();
        for (Op op : old) {
            Group g = groupOf.get(op);
            if (g == null || g.ops.size() < 2) {
                Uses.replace(op, substitution);
                b.ops().add(op);
            } else if (g.last == op) {
                b.ops().add(fusion(members.get(g), users, inputs, substitution));
            }
        }
        b.ops().removeIf(inputs::isDissolved);
    }

    /**
     * Moves {@code members} (in program order) into a fusion op and maps their escaping values to its results. An
     * input made by ops that {@code inputs} dissolves is read through them: as a view or piecewise.
     */
    private static Op fusion(List<Op> groupMembers, Map<Value, List<Op>> users, FusionInputs inputs,
                             Map<Value, Value> substitution) {
        Set<Op> memberSet = Collections.newSetFromMap(new IdentityHashMap<>());
        memberSet.addAll(groupMembers);
        List<Op> members = withoutRepeatedBroadcasts(groupMembers, users, memberSet);
        Set<Value> defined = Collections.newSetFromMap(new IdentityHashMap<>());
        members.forEach(m -> defined.add(m.result()));
        SequencedSet<Value> inputSet = new LinkedHashSet<>();
        List<Value> escaping = new ArrayList<>();
        for (Op m : members) {
            m.operands().stream().filter(v -> !defined.contains(v)).forEach(inputSet::add);
            if (users.getOrDefault(m.result(), List.of()).stream().anyMatch(u -> !memberSet.contains(u))) {
                escaping.add(m.result());
            }
        }
        List<Value> inputList = List.copyOf(inputSet);
        Block region = Block.withArgs(inputList.stream().map(Value::type).toList());
        Map<Value, Value> toArgument = new IdentityHashMap<>();
        for (int i = 0; i < inputList.size(); i++) {
            toArgument.put(inputList.get(i), region.arguments().get(i));
        }
        for (Op m : members) {
            m.operands().replaceAll(v -> toArgument.getOrDefault(v, v));
            region.ops().add(m);
        }
        Op last = members.getLast();
        region.ops().add(new Op(StableHlo.RETURN, escaping, List.of(), Map.of(), List.of(), last.location()));
        Op fusion = new Op(StableHlo.FUSION, List.of(), escaping.stream().map(Value::type).toList(),
                Map.of(), List.of(region), last.location());
        readInputs(fusion, inputList, inputs, substitution);
        for (int i = 0; i < escaping.size(); i++) {
            substitution.put(escaping.get(i), fusion.results().get(i));
        }
        return fusion;
    }

    /**
     * {@code members} less each broadcast scalar that repeats an earlier one of them and is used only by them (the
     * copies {@link #unshareScalarBroadcasts} made for ops that ended up in one group); their users read the first.
     */
    private static List<Op> withoutRepeatedBroadcasts(List<Op> members, Map<Value, List<Op>> users,
                                                      Set<Op> memberSet) {
        Map<List<Object>, Value> first = new HashMap<>();
        Map<Value, Value> same = new IdentityHashMap<>();
        List<Op> kept = new ArrayList<>(members.size());
        for (Op m : members) {
            m.operands().replaceAll(v -> same.getOrDefault(v, v));
            if (isScalarBroadcast(m) && memberSet.containsAll(users.getOrDefault(m.result(), List.of()))) {
                Value earlier = first.putIfAbsent(List.of(m.operand(0), m.attributes(), m.result().type()),
                        m.result());
                if (earlier != null) {
                    same.put(m.result(), earlier);
                    continue;
                }
            }
            kept.add(m);
        }
        return kept;
    }

    /**
     * Sets the operands of {@code fusion}, whose region argument {@code i} stands for {@code inputList.get(i)}, and
     * the attributes that say how dissolved inputs are read.
     */
    private static void readInputs(Op fusion, List<Value> inputList, FusionInputs inputs,
                                   Map<Value, Value> substitution) {
        List<Value> operands = fusion.operands();
        List<Attr> starts = new ArrayList<>();
        List<List<FusionInputs.Box>> piecewise = new ArrayList<>();
        for (Value v : inputList) {
            List<FusionInputs.Box> boxes = inputs.isDissolved(v) ? inputs.boxes(v) : List.of();
            FusionInputs.Box only = boxes.size() == 1 && !boxes.getFirst().isFill() ? boxes.getFirst() : null;
            if (boxes.isEmpty() || only != null) {
                Value source = only == null ? v : only.source();
                boolean whole = only == null || source.tensorType().equals(v.tensorType());
                operands.add(substitution.getOrDefault(source, source));
                starts.add(Attr.I64Array.of(whole ? new long[0] : only.from()));
                piecewise.add(List.of());
            } else {
                Value first = boxes.getFirst().source();
                operands.add(substitution.getOrDefault(first, first));
                starts.add(Attr.I64Array.of(new long[0]));
                piecewise.add(boxes);
            }
        }
        List<Attr> pieces = new ArrayList<>();
        for (int i = 0; i < piecewise.size(); i++) {
            List<Attr> entry = new ArrayList<>();
            for (FusionInputs.Box box : piecewise.get(i)) {
                Value source = substitution.getOrDefault(box.source(), box.source());
                int operand = entry.isEmpty() ? i : operands.indexOf(source);
                if (operand < 0) {
                    operand = operands.size();
                    operands.add(source);
                }
                entry.add(new FusionPiece(operand, box.at(), box.from(), box.size()).attr());
            }
            pieces.add(new Attr.Array(entry));
        }
        if (starts.stream().anyMatch(a -> !((Attr.I64Array) a).values().isEmpty())) {
            fusion.attributes().put(StableHlo.FUSION_SLICE_STARTS, new Attr.Array(starts));
        }
        if (piecewise.stream().anyMatch(boxes -> !boxes.isEmpty())) {
            fusion.attributes().put(StableHlo.FUSION_PIECES, new Attr.Array(pieces));
        }
    }
}
