package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/** Builds a {@link FusedLoopSpec} node by node, for tests of the generated loops; each method returns the node. */
final class SpecBuilder {
    private final List<FusedLoopSpec.Node> nodes = new ArrayList<>();

    int element(int input, DType t) {
        return add(new FusedLoopSpec.Element(input, t));
    }

    int scalar(int input, DType t) {
        return add(new FusedLoopSpec.Scalar(input, t));
    }

    int apply(ElementwiseOp op, DType t, int... args) {
        return apply(op, t, t, args);
    }

    int apply(ElementwiseOp op, DType operand, DType result, int... args) {
        return add(new FusedLoopSpec.Apply(op, operand, result, IntStream.of(args).boxed().toList()));
    }

    int compare(ElementwiseOp comparison, DType operand, int a, int b) {
        return add(new FusedLoopSpec.Apply(comparison, operand, DType.BOOL, List.of(a, b)));
    }

    int select(DType t, int cond, int a, int b) {
        return add(new FusedLoopSpec.Apply(ElementwiseOp.SELECT, t, t, List.of(cond, a, b)));
    }

    FusedLoopSpec spec(int... results) {
        return new FusedLoopSpec(List.copyOf(nodes), IntStream.of(results).boxed().toList());
    }

    private int add(FusedLoopSpec.Node node) {
        nodes.add(node);
        return nodes.size() - 1;
    }
}
