package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.LibraryReduction;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code fuse-reductions} pass, in the pipeline of targets whose executor runs {@link StableHlo#FUSED_REDUCE}
 * (the CPU's; the GPU has its own reduce kernels and leaves the pass out). A {@code reduce} of one f32, f64, i32 or
 * i64 operand over trailing axes (all axes included) whose body is a single add, multiply, maximum or minimum of its
 * two arguments, and whose operand is the one result of a {@code weft.fusion} or of a lone elementwise op that
 * nothing else uses, becomes one
 * {@link StableHlo#FUSED_REDUCE} in the reduce's place: the fusion's operands, attributes and region carry over
 * (a lone op gets a region of its own), then the init; the reduce's body is the second region. The reduced value is
 * then never materialised. Everything else is left alone: other axes (the executor folds each output's contiguous
 * run in order, as the library reduction does), producers with other uses or several results, other bodies,
 * other dtypes. Looks inside {@code while} and {@code if} bodies.
 */
public final class ReductionFusion implements Pass {
    private static final Set<String> NESTED = Set.of(StableHlo.WHILE, StableHlo.IF);
    private static final Set<DType> DTYPES = Set.of(DType.F32, DType.F64, DType.I32, DType.I64);

    @Override
    public String name() {
        return "fuse-reductions";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            fuse(f.body(), Uses.of(f.body()));
        }
    }

    private static void fuse(Block b, Uses uses) {
        for (Op op : b.ops()) {
            if (NESTED.contains(op.name())) {
                op.regions().forEach(r -> fuse(r, uses));
            }
        }
        Map<Value, Op> producer = new IdentityHashMap<>();
        b.ops().forEach(op -> op.results().forEach(v -> producer.put(v, op)));
        Set<Op> absorbed = Collections.newSetFromMap(new IdentityHashMap<>());
        Map<Value, Value> substitution = new IdentityHashMap<>();
        for (int k = 0; k < b.ops().size(); k++) {
            Op reduce = b.ops().get(k);
            Op p = isFusibleReduce(reduce) ? producer.get(reduce.operand(0)) : null;
            if (p != null && isFusibleProducer(p) && uses.count(reduce.operand(0)) == 1) {
                Op fused = fusedReduce(p, reduce);
                b.ops().set(k, fused);
                absorbed.add(p);
                substitution.put(reduce.result(), fused.result());
            }
        }
        b.ops().removeIf(absorbed::contains);
        b.ops().forEach(op -> Uses.replace(op, substitution));
    }

    /** A single-operand library reduction over nonempty trailing axes of a dtype the CPU kernels fold. */
    private static boolean isFusibleReduce(Op op) {
        if (!op.name().equals(StableHlo.REDUCE) || op.operands().size() != 2 || op.results().size() != 1
                || op.regions().size() != 1 || !(op.operand(0).type() instanceof TensorType in)
                || !DTYPES.contains(in.dtype()) || !(op.attr("dimensions") instanceof Attr.I64Array dimensions)) {
            return false;
        }
        long[] axes = dimensions.toArray().clone();
        Arrays.sort(axes);
        int rank = in.shape().rank();
        for (int i = 0; i < axes.length; i++) {
            if (axes[i] != rank - axes.length + i) {
                return false;
            }
        }
        return axes.length > 0 && LibraryReduction.combiner(op.regions().getFirst()) != null;
    }

    private static boolean isFusibleProducer(Op p) {
        return p.results().size() == 1 && (p.name().equals(StableHlo.FUSION)
                || p.elementwise() != null && p.regions().isEmpty());
    }

    /** The fused reduction of {@code producer}'s result by {@code reduce}; a lone op moves into a new region. */
    private static Op fusedReduce(Op producer, Op reduce) {
        List<Value> operands = new ArrayList<>();
        Map<String, Attr> attributes = new LinkedHashMap<>();
        attributes.put("dimensions", reduce.attr("dimensions"));
        Block region;
        if (producer.name().equals(StableHlo.FUSION)) {
            operands.addAll(producer.operands());
            attributes.putAll(producer.attributes());
            region = producer.regions().getFirst();
        } else {
            operands.addAll(new LinkedHashSet<>(producer.operands()));
            region = Block.withArgs(operands.stream().map(Value::type).toList());
            producer.operands().replaceAll(v -> region.arguments().get(operands.indexOf(v)));
            region.ops().add(producer);
            region.ops().add(new Op(StableHlo.RETURN, List.of(producer.result()), List.of(), Map.of(), List.of(),
                    producer.location()));
        }
        operands.add(reduce.operand(1));
        return new Op(StableHlo.FUSED_REDUCE, operands, List.of(reduce.result().type()), attributes,
                List.of(region, reduce.regions().getFirst()), reduce.location());
    }
}
