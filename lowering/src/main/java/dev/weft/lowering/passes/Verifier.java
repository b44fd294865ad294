package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The {@code verify} pass: checks that every operand is defined before its use (in its block or an enclosing
 * one; {@code weft.fusion} regions see only their arguments), that each block ends in the right terminator and
 * has no other, that elementwise ops have operands and result of one shape, and that region signatures match
 * their ops ({@code while}, {@code if}, {@code reduce}, {@code weft.fusion}). Failures name the op's source
 * location.
 */
public final class Verifier implements Pass {
    private static final TensorType PREDICATE = TensorType.of(DType.BOOL);

    @Override
    public String name() {
        return "verify";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Op last = f.body().ops().isEmpty() ? null : f.body().terminator();
            if (last == null || !last.name().equals(StableHlo.FUNC_RETURN)) {
                throw new WeftException(last == null ? null : last.location(),
                        "verify: function @" + f.name() + " does not end in " + StableHlo.FUNC_RETURN);
            }
            block(f.body(), StableHlo.FUNC_RETURN, newScope());
        }
    }

    private void block(Block b, String terminator, Set<Value> visible) {
        visible.addAll(b.arguments());
        if (b.ops().isEmpty()) {
            throw new WeftException(null, "verify: empty block, expected " + terminator);
        }
        for (int i = 0; i < b.ops().size(); i++) {
            Op op = b.ops().get(i);
            boolean last = i == b.ops().size() - 1;
            if (last != op.name().equals(terminator) || !last && Effects.isTerminator(op)) {
                throw fail(op, last ? "block must end in " + terminator : "terminator before the end of its block");
            }
            for (Value v : op.operands()) {
                if (!visible.contains(v)) {
                    throw fail(op, "operand " + v.type().mlir() + " is not defined before its use");
                }
            }
            if (StableHlo.isElementwise(op.name())) {
                elementwise(op);
            }
            regions(op);
            boolean isolated = op.name().equals(StableHlo.FUSION);
            for (Block region : op.regions()) {
                Set<Value> inner = newScope();
                if (!isolated) {
                    inner.addAll(visible);
                }
                block(region, StableHlo.RETURN, inner);
            }
            visible.addAll(op.results());
        }
    }

    private static void elementwise(Op op) {
        if (op.results().size() != 1 || op.operands().isEmpty()) {
            throw fail(op, "elementwise op needs operands and one result");
        }
        var shape = op.result().tensorType().shape();
        for (Value v : op.operands()) {
            if (!v.tensorType().shape().equals(shape)) {
                throw fail(op, "elementwise operand " + v.type().mlir() + " does not have the result's shape "
                        + op.result().type().mlir());
            }
        }
    }

    /** Region arguments and results against the op's operands and results. */
    private static void regions(Op op) {
        List<Type> operandTypes = op.operands().stream().map(Value::type).toList();
        List<Type> resultTypes = op.results().stream().map(Value::type).toList();
        switch (op.name()) {
            case StableHlo.WHILE -> {
                expectRegions(op, 2);
                signature(op, 0, operandTypes, List.of(PREDICATE));
                signature(op, 1, operandTypes, operandTypes);
                if (!resultTypes.equals(operandTypes)) {
                    throw fail(op, "while results " + resultTypes + " differ from its operands " + operandTypes);
                }
            }
            case StableHlo.IF -> {
                expectRegions(op, 2);
                if (!op.operands().getFirst().type().equals(PREDICATE)) {
                    throw fail(op, "if predicate must be tensor<i1>");
                }
                signature(op, 0, List.of(), resultTypes);
                signature(op, 1, List.of(), resultTypes);
            }
            case StableHlo.REDUCE -> {
                expectRegions(op, 1);
                Type scalar = TensorType.of(op.operands().getFirst().tensorType().dtype());
                signature(op, 0, List.of(scalar, scalar), List.of(scalar));
            }
            case StableHlo.FUSION -> {
                expectRegions(op, 1);
                signature(op, 0, fusionArguments(op), resultTypes);
            }
            default -> { }
        }
    }

    /**
     * The region argument types a fusion must have: each operand's type, or for a view the window's type once the
     * window is checked to lie inside the operand.
     */
    private static List<Type> fusionArguments(Op op) {
        if (op.attr(StableHlo.FUSION_SLICE_STARTS) instanceof Attr.Array a
                && a.elements().size() != op.operands().size()) {
            throw fail(op, StableHlo.FUSION_SLICE_STARTS + " needs one entry per operand");
        }
        List<Type> out = new ArrayList<>();
        for (int i = 0; i < op.operands().size(); i++) {
            long[] starts = StableHlo.fusionSliceStarts(op, i);
            TensorType source = op.operand(i).tensorType();
            if (starts.length == 0) {
                out.add(source);
                continue;
            }
            if (op.regions().size() != 1 || op.regions().getFirst().arguments().size() != op.operands().size()
                    || !(op.regions().getFirst().arguments().get(i).type() instanceof TensorType view)) {
                throw fail(op, "fusion region must take one tensor per operand");
            }
            long[] from = source.shape().dims(), size = view.shape().dims();
            boolean inside = view.dtype() == source.dtype() && size.length == from.length
                    && starts.length == from.length;
            for (int k = 0; inside && k < starts.length; k++) {
                inside = starts[k] >= 0 && starts[k] + size[k] <= from[k];
            }
            if (!inside) {
                throw fail(op, "fusion view " + view.mlir() + " at " + Arrays.toString(starts)
                        + " does not lie inside operand " + source.mlir());
            }
            out.add(view);
        }
        return out;
    }

    private static void expectRegions(Op op, int n) {
        if (op.regions().size() != n) {
            throw fail(op, "expected " + n + " regions, found " + op.regions().size());
        }
    }

    private static void signature(Op op, int region, List<Type> args, List<Type> results) {
        Block b = op.regions().get(region);
        List<Type> actualArgs = b.arguments().stream().map(Value::type).toList();
        List<Type> actualResults = b.ops().isEmpty() ? List.of() : b.results().stream().map(Value::type).toList();
        if (!actualArgs.equals(args) || !actualResults.equals(results)) {
            throw fail(op, "region " + region + " has signature " + actualArgs + " -> " + actualResults
                    + ", expected " + args + " -> " + results);
        }
    }

    private static Set<Value> newScope() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    private static WeftException fail(Op op, String message) {
        return new WeftException(op.location(), "verify: " + op.name() + ": " + message);
    }
}
