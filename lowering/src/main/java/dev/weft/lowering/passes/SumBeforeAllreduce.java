package dev.weft.lowering.passes;

import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.LibraryReduction;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code sum-before-allreduce} pass: {@code reduce_sum(allreduce_sum(x))}, with a zero initial value and the
 * allreduce's result used by nothing else, becomes {@code allreduce_sum(reduce_sum(x))}: the same sum (in another
 * order), with the message cut to the reduced shape. Differentiating a data-parallel step makes this pattern for every
 * bias: the invariant bias is broadcast over the batch, so its cotangent is allreduced at {@code [batch, width]} and
 * only then summed over the batch; after this pass, {@code [width]} travels (on the 784-512-512-10 MLP, 132 K fewer
 * floats a step of the 800 K allreduced). Only when no op with an effect lies between the two, so communication keeps
 * its order. Runs before {@code combine-allreduces} and {@code thread-tokens}.
 */
public final class SumBeforeAllreduce implements Pass {
    @Override
    public String name() {
        return "sum-before-allreduce";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Map<Value, Op> producer = new IdentityHashMap<>();
            IrWalk.forEachOp(f.body(), op -> op.results().forEach(v -> producer.put(v, op)));
            Uses uses = Uses.of(f.body());
            rewriteNested(f.body(), producer, uses);
        }
    }

    private static void rewriteNested(Block b, Map<Value, Op> producer, Uses uses) {
        b.ops().forEach(op -> op.regions().forEach(r -> rewriteNested(r, producer, uses)));
        rewrite(b, producer, uses);
    }

    private static void rewrite(Block b, Map<Value, Op> producer, Uses uses) {
        List<Op> ops = b.ops();
        Map<Op, Integer> position = new IdentityHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            position.put(ops.get(i), i);
        }
        Map<Op, List<Op>> replacements = new IdentityHashMap<>();
        List<Op> dropped = new ArrayList<>();
        for (Op sum : ops) {
            Op allreduce = sumOfAllreduce(sum, producer, uses);
            if (allreduce == null || !position.containsKey(allreduce)
                    || effectBetween(ops, position.get(allreduce), position.get(sum))) {
                continue;
            }
            Op reduced = new Op(StableHlo.REDUCE, List.of(allreduce.operand(0), sum.operand(1)),
                    List.of(sum.result().type()), sum.attributes(), sum.regions(), sum.location());
            TensorType type = sum.result().tensorType();
            Map<String, Attr> attrs = new LinkedHashMap<>(allreduce.attributes());
            attrs.put("backend_config", new Attr.CommConfig(CombineAllReduces.blockingAllreduce(allreduce),
                    type.aval()));
            Op moved = new Op(StableHlo.CUSTOM_CALL, List.of(reduced.result()), List.of(type), attrs, List.of(),
                    allreduce.location(), allreduce.effect());
            replacements.put(sum, List.of(reduced, moved));
            dropped.add(allreduce);
            producer.put(moved.result(), moved);
        }
        if (replacements.isEmpty()) {
            return;
        }
        Map<Value, Value> substitution = new IdentityHashMap<>();
        List<Op> out = new ArrayList<>(ops.size());
        for (Op op : ops) {
            if (dropped.contains(op)) {
                continue;
            }
            List<Op> instead = replacements.get(op);
            if (instead == null) {
                out.add(op);
            } else {
                out.addAll(instead);
                substitution.put(op.result(), instead.getLast().result());
            }
        }
        out.forEach(op -> Uses.replace(op, substitution));
        ops.clear();
        ops.addAll(out);
    }

    /** The allreduce a zero-initialised sum reduces when it is a built-in SUM used by the sum alone, or null. */
    private static Op sumOfAllreduce(Op sum, Map<Value, Op> producer, Uses uses) {
        if (!sum.name().equals(StableHlo.REDUCE) || sum.operands().size() != 2 || sum.results().size() != 1
                || LibraryReduction.combiner(sum.regions().getFirst()) != ElementwiseOp.ADD
                || !isZero(producer.get(sum.operand(1)))) {
            return null;
        }
        Op a = producer.get(sum.operand(0));
        CommOp.AllReduce allreduce = a == null ? null : CombineAllReduces.blockingAllreduce(a);
        return allreduce != null && allreduce.op() == ReduceOp.SUM && uses.count(a.result()) == 1 ? a : null;
    }

    private static boolean isZero(Op constant) {
        if (constant == null || !constant.name().equals(StableHlo.CONSTANT)
                || !(constant.attr("value") instanceof Attr.Dense d)) {
            return false;
        }
        // +0.0 and integer 0 are all-zero bytes; -0.0 is not, and is left alone
        return d.data().byteSize() > 0
                && d.data().mismatch(MemorySegment.ofArray(new byte[(int) d.data().byteSize()])) < 0;
    }

    private static boolean effectBetween(List<Op> ops, int from, int to) {
        for (int i = from + 1; i < to; i++) {
            if (Effects.hasEffect(ops.get(i))) {
                return true;
            }
        }
        return false;
    }
}
