package dev.weft.graph;

import dev.weft.Tensor;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Params;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.stream.IntStream;

/**
 * Whether two traces recorded the same program: the same nodes in the same order, with equal parameters (constants
 * by contents, whatever their size), the same wiring, the same result types, the same communicators read. Source
 * lines are not compared. A custom-rule node compares by its body and argument count, not by its rules: those are
 * Java functions, used only by the transforms that already ran when the graph was traced.
 */
public final class GraphComparison {
    private GraphComparison() {
    }

    /**
     * Where {@code b} first differs from {@code a}: the line of the first node that does ({@link SourceLocation#UNKNOWN}
     * when it has none, or the programs differ in their parameters, results or communicators), or empty when they
     * are the same program.
     */
    public static Optional<SourceLocation> firstDifference(Graph a, Graph b) {
        return firstDifference(a, b, GraphComparison::sameContents);
    }

    /**
     * As {@link #firstDifference(Graph, Graph)}, with {@code sameConstant} telling whether a constant of {@code a}
     * and the one in its place in {@code b} (same dtype and shape) count as the same.
     */
    public static Optional<SourceLocation> firstDifference(Graph a, Graph b, BiPredicate<Tensor, Tensor> sameConstant) {
        if (a.commsRead().size() != b.commsRead().size()
                || !IntStream.range(0, a.commsRead().size())
                        .allMatch(i -> a.commsRead().get(i) == b.commsRead().get(i))) {
            return Optional.of(SourceLocation.UNKNOWN);
        }
        return region(a.body(), b.body(), sameConstant);
    }

    private static Optional<SourceLocation> region(Region a, Region b, BiPredicate<Tensor, Tensor> sameConstant) {
        if (!avals(a.params()).equals(avals(b.params()))) {
            return Optional.of(SourceLocation.UNKNOWN);
        }
        Map<Var, Integer> ia = new HashMap<>();
        Map<Var, Integer> ib = new HashMap<>();
        for (int i = 0; i < a.params().size(); i++) {
            ia.put(a.params().get(i), i);
            ib.put(b.params().get(i), i);
        }
        int n = Math.min(a.nodes().size(), b.nodes().size());
        for (int k = 0; k < n; k++) {
            Node x = a.nodes().get(k);
            Node y = b.nodes().get(k);
            if (x.prim() != y.prim() || !avals(x.outputs()).equals(avals(y.outputs()))
                    || !indices(x.inputs(), ia).equals(indices(y.inputs(), ib)) || !sameParams(x, y, sameConstant)) {
                return Optional.of(y.location());
            }
            for (int r = 0; r < x.regions().size(); r++) {
                Optional<SourceLocation> inner = region(x.regions().get(r), y.regions().get(r), sameConstant);
                if (inner.isPresent()) {
                    return Optional.of(inner.get().isUnknown() ? y.location() : inner.get());
                }
            }
            for (int o = 0; o < x.outputs().size(); o++) {
                ia.put(x.outputs().get(o), ia.size());
                ib.put(y.outputs().get(o), ib.size());
            }
        }
        if (a.nodes().size() != b.nodes().size()) {
            return Optional.of(n < b.nodes().size() ? b.nodes().get(n).location() : SourceLocation.UNKNOWN);
        }
        return indices(a.results(), ia).equals(indices(b.results(), ib)) ? Optional.empty()
                : Optional.of(SourceLocation.UNKNOWN);
    }

    private static boolean sameParams(Node x, Node y, BiPredicate<Tensor, Tensor> sameConstant) {
        Params p = x.params();
        Params q = y.params();
        if (x.prim() == Prims.CONSTANT) {
            return sameConstant.test(((ConstantParams) p).value(), ((ConstantParams) q).value());
        }
        if (p instanceof CustomCallParams c && q instanceof CustomCallParams d) {
            return c.getClass() == d.getClass() && c.arguments() == d.arguments();
        }
        if (p instanceof RegionParams r && q instanceof RegionParams s) {
            return s.withRegions(r.regions()).equals(r);
        }
        return p.equals(q);
    }

    /** Whether two constants hold the same dtype, shape and bytes. */
    public static boolean sameContents(Tensor a, Tensor b) {
        return a == b || a.dtype() == b.dtype() && Arrays.equals(a.shape(), b.shape())
                && TensorAccess.data(a).mismatch(TensorAccess.data(b)) == -1;
    }

    private static List<Object> avals(List<Var> vars) {
        return vars.stream().map(v -> (Object) v.aval()).toList();
    }

    private static List<Integer> indices(List<Var> vars, Map<Var, Integer> index) {
        return vars.stream().map(v -> index.getOrDefault(v, -1)).toList();
    }
}
