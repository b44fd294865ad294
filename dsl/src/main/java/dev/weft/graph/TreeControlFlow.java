package dev.weft.graph;

import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/** {@code fori}, {@code whileLoop} and {@code cond} over trees: their tensor forms on the trees' leaves. */
public final class TreeControlFlow {
    private TreeControlFlow() {
    }

    /** {@link ControlFlow#fori} carrying the tree {@code init}; the body must return a tree of its structure. */
    @SuppressWarnings("unchecked")
    public static <T> T fori(int lo, int hi, T init, BiFunction<Tensor, T, T> body, SourceLocation where) {
        List<Tensor> leaves = new ArrayList<>();
        Trees.Structure s = Trees.structure(init, leaves, "init");
        List<Tensor> out = ControlFlow.fori(lo, hi, leaves, (i, c) -> flatten("fori: the body",
                body.apply(i, (T) s.rebuild(c)), s, where), where);
        return (T) s.rebuild(out);
    }

    /** {@link ControlFlow#whileLoop} carrying the tree {@code init}. */
    @SuppressWarnings("unchecked")
    public static <T> T whileLoop(Function<T, Tensor> cond, UnaryOperator<T> body, T init, SourceLocation where) {
        List<Tensor> leaves = new ArrayList<>();
        Trees.Structure s = Trees.structure(init, leaves, "init");
        List<Tensor> out = ControlFlow.whileLoop(c -> cond.apply((T) s.rebuild(c)),
                c -> flatten("whileLoop: the body", body.apply((T) s.rebuild(c)), s, where), leaves, where);
        return (T) s.rebuild(out);
    }

    /** {@link ControlFlow#cond} of two trees of one structure. */
    @SuppressWarnings("unchecked")
    public static <T> T cond(Tensor pred, Supplier<T> onTrue, Supplier<T> onFalse, SourceLocation where) {
        Trees.Structure[] s = new Trees.Structure[2];
        List<Tensor> out = ControlFlow.cond(pred, () -> {
            List<Tensor> l = new ArrayList<>();
            s[0] = Trees.structure(onTrue.get(), l, "onTrue()");
            return l;
        }, () -> {
            List<Tensor> l = new ArrayList<>();
            s[1] = Trees.structure(onFalse.get(), l, "onFalse()");
            if (!s[1].equals(s[0])) {
                throw new ShapeException(where, "cond: the branches return trees of different structures: "
                        + Trees.describe(s[0]) + " and " + Trees.describe(s[1]));
            }
            return l;
        }, where);
        return (T) s[0].rebuild(out);
    }

    private static List<Tensor> flatten(String what, Object tree, Trees.Structure expected, SourceLocation where) {
        List<Tensor> l = new ArrayList<>();
        Trees.Structure got = Trees.structure(tree, l, "the result");
        if (!got.equals(expected)) {
            throw new ShapeException(where, what + " returns " + Trees.describe(got) + " but the loop carries "
                    + Trees.describe(expected));
        }
        return l;
    }
}
