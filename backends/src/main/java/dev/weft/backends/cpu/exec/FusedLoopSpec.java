package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The dataflow of a fusion region with its values numbered, which is all that code generation depends on: equal
 * specs compile to one class. Nodes are in evaluation order and refer to earlier nodes by index; inputs are the
 * fusion's operands followed by the region's full-size constants.
 */
record FusedLoopSpec(List<Node> nodes, List<Integer> results) {
    sealed interface Node {
        DType dtype();
    }

    /** Element {@code i} of full-size input {@code input}. */
    record Element(int input, DType dtype) implements Node {
    }

    /** The one element of rank-0 input {@code input}, read before the loop. */
    record Scalar(int input, DType dtype) implements Node {
    }

    /** Elementwise op {@code op} on nodes {@code args} of dtype {@code operand} (for select, of its second). */
    record Apply(ElementwiseOp op, DType operand, DType dtype, List<Integer> args) implements Node {
    }

    /**
     * The spec of {@code fusion} (of {@code n} elements) and the region's full-size constants in input order, or
     * empty when the region holds an op on a dtype the kernels reject: those fusions keep the chunked path, which
     * reports the error when it runs.
     */
    static Optional<FusedLoopSpec> of(Op fusion, long n, List<Attr.Dense> constants) {
        Block region = fusion.regions().getFirst();
        Map<Value, Integer> node = new IdentityHashMap<>();
        List<Node> nodes = new ArrayList<>();
        int inputs = region.arguments().size();
        for (Op op : region.ops().subList(0, region.ops().size() - 1)) {
            DType dtype = op.result().tensorType().dtype();
            if (op.name().equals(StableHlo.CONSTANT)) {
                if (!(op.attr("value") instanceof Attr.Dense d) || d.type().shape().size() != n) {
                    return Optional.empty();
                }
                node.put(op.result(), nodes.size());
                nodes.add(new Element(inputs + constants.size(), dtype));
                constants.add(d);
                continue;
            }
            if (op.name().equals(StableHlo.BROADCAST_IN_DIM)) {
                int input = region.arguments().indexOf(op.operand(0));
                if (input < 0 || op.operand(0).tensorType().shape().rank() != 0) {
                    return Optional.empty();
                }
                node.put(op.result(), nodes.size());
                nodes.add(new Scalar(input, dtype));
                continue;
            }
            ElementwiseOp elementwise = op.elementwise();
            if (elementwise == null) {
                return Optional.empty();
            }
            DType operand = op.operand(elementwise == ElementwiseOp.SELECT ? 1 : 0).tensorType().dtype();
            if (!elementwise.accepts(operand)) {
                return Optional.empty();
            }
            List<Integer> args = new ArrayList<>();
            for (Value v : op.operands()) {
                int input = region.arguments().indexOf(v);
                if (!node.containsKey(v) && input >= 0 && v.tensorType().shape().size() == n) {
                    node.put(v, nodes.size());
                    nodes.add(new Element(input, v.tensorType().dtype()));
                }
                Integer a = node.get(v);
                if (a == null) {
                    return Optional.empty();
                }
                args.add(a);
            }
            node.put(op.result(), nodes.size());
            nodes.add(new Apply(elementwise, operand, dtype, List.copyOf(args)));
        }
        List<Integer> results = new ArrayList<>();
        for (Value v : region.results()) {
            Integer r = node.get(v);
            if (r == null) {
                return Optional.empty();
            }
            results.add(r);
        }
        return Optional.of(new FusedLoopSpec(List.copyOf(nodes), List.copyOf(results)));
    }
}
