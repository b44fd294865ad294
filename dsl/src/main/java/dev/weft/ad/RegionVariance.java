package dev.weft.ad;

import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CondParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.WhileParams;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The variance of a region's results from its parameters', by each node's {@link VarianceRule}: the rules of
 * {@code fori} (a carry varies where its initial value or any step's result does: iterated to a fixed point) and
 * {@code cond} (its results vary where either branch's do, or the predicate does, since ranks may then take
 * different branches).
 */
final class RegionVariance {
    private RegionVariance() {
    }

    static List<Variance> results(Region region, List<Variance> params) {
        Map<Var, Variance> of = new HashMap<>();
        for (int i = 0; i < params.size(); i++) {
            of.put(region.params().get(i), params.get(i));
        }
        for (Node node : region.nodes()) {
            List<Variance> in = node.inputs().stream().map(v -> of.getOrDefault(v, Variance.VARYING)).toList();
            List<Variance> out = AdRules.typing(node.prim(), node.params(), in, node.outputs().size()).results();
            for (int k = 0; k < out.size(); k++) {
                of.put(node.outputs().get(k), out.get(k));
            }
        }
        return region.results().stream().map(v -> of.getOrDefault(v, Variance.VARYING)).toList();
    }

    /** A loop's final carries, for initial carries and captures {@code in}. */
    static List<Variance> loop(LoopParams p, List<Variance> in) {
        int n = p.body().results().size();
        List<Variance> carries = new ArrayList<>(in.subList(0, n));
        while (true) {
            List<Variance> params = new ArrayList<>();
            params.add(Variance.INVARIANT);
            params.addAll(carries);
            params.addAll(in.subList(n, in.size()));
            List<Variance> out = results(p.body(), params);
            boolean same = true;
            for (int k = 0; k < n; k++) {
                Variance next = carries.get(k).meet(out.get(k));
                same &= next.equals(carries.get(k));
                carries.set(k, next);
            }
            if (same) {
                return carries;
            }
        }
    }

    /**
     * A while loop's final carries, for initial carries and captures {@code in}: as a loop's, and varying wherever
     * the condition may (ranks may then run different numbers of steps).
     */
    static List<Variance> whileLoop(WhileParams p, List<Variance> in) {
        int n = p.body().results().size();
        List<Variance> carries = new ArrayList<>(in.subList(0, n));
        while (true) {
            List<Variance> params = new ArrayList<>(carries);
            params.addAll(in.subList(n, in.size()));
            Variance pred = results(p.cond(), params).getFirst();
            List<Variance> out = results(p.body(), params);
            boolean same = true;
            for (int k = 0; k < n; k++) {
                Variance next = carries.get(k).meet(out.get(k)).meet(pred);
                same &= next.equals(carries.get(k));
                carries.set(k, next);
            }
            if (same) {
                return carries;
            }
        }
    }

    /** A cond's results, for the predicate then the captures {@code in}. */
    static List<Variance> cond(CondParams p, List<Variance> in) {
        List<Variance> captures = in.subList(1, in.size());
        List<Variance> t = results(p.onTrue(), captures), f = results(p.onFalse(), captures);
        List<Variance> out = new ArrayList<>(t.size());
        for (int k = 0; k < t.size(); k++) {
            out.add(t.get(k).meet(f.get(k)).meet(in.getFirst()));
        }
        return out;
    }
}
