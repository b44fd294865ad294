package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.CanonicalMatmul;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code fold-transposes} pass (XLA's TransposeFolding): a matmul operand that is a {@code transpose} swapping
 * its last two axes reads the transpose's operand instead, with the contracting axis moved to match, so the
 * executor passes it to BLAS as a transposed operand and never writes the transpose out. Reverse mode makes such
 * transposes for every weight and activation ({@code dx = dy·Wᵀ}, {@code dW = xᵀ·dy}): in an MLP training step
 * they were an eighth of the time, a 1 MiB transpose costing 3.6 ms for its cache misses. Only matmuls in the
 * executors' form ({@link CanonicalMatmul}) change; a transpose left without users is {@code dce}'s.
 */
public final class FoldTransposes implements Pass {
    @Override
    public String name() {
        return "fold-transposes";
    }

    @Override
    public void run(Module m) {
        Map<Value, Op> producer = new IdentityHashMap<>();
        IrWalk.forEachOp(m, op -> op.results().forEach(v -> producer.put(v, op)));
        IrWalk.forEachOp(m, op -> {
            if (op.name().equals(StableHlo.DOT_GENERAL)) {
                fold(op, producer);
            }
        });
    }

    private static void fold(Op dot, Map<Value, Op> producer) {
        CanonicalMatmul mm;
        try {
            mm = CanonicalMatmul.of(dot);
        } catch (IllegalArgumentException e) {
            return;
        }
        Attr.DotDimensions dd = (Attr.DotDimensions) dot.attr("dot_dimension_numbers");
        int batch = dd.lhsBatch().size();
        List<Long> lhsContracting = dd.lhsContracting(), rhsContracting = dd.rhsContracting();
        Value lhs = swapped(dot.operand(0), batch, producer);
        if (lhs != null && !mm.transA()) {
            dot.operands().set(0, lhs);
            lhsContracting = List.of((long) batch);
        }
        Value rhs = swapped(dot.operand(1), batch, producer);
        if (rhs != null && !mm.transB()) {
            dot.operands().set(1, rhs);
            rhsContracting = List.of((long) batch + 1);
        }
        if (lhsContracting != dd.lhsContracting() || rhsContracting != dd.rhsContracting()) {
            dot.attributes().put("dot_dimension_numbers",
                    new Attr.DotDimensions(dd.lhsBatch(), dd.rhsBatch(), lhsContracting, rhsContracting));
        }
    }

    /**
     * The operand of the transpose that produced {@code v}, when it only swaps the last two of {@code batch + 2}
     * axes; else {@code null}.
     */
    private static Value swapped(Value v, int batch, Map<Value, Op> producer) {
        Op t = producer.get(v);
        if (t == null || !t.name().equals(StableHlo.TRANSPOSE)) {
            return null;
        }
        long[] perm = t.longs("permutation");
        if (perm.length != batch + 2 || perm[batch] != batch + 1 || perm[batch + 1] != batch) {
            return null;
        }
        for (int i = 0; i < batch; i++) {
            if (perm[i] != i) {
                return null;
            }
        }
        return t.operand(0);
    }
}
