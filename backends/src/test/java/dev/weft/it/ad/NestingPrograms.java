package dev.weft.it.ad;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.List;

/** Transforms and control flow nested in one another, each callable eagerly and as a {@code @Compile} method. */
public final class NestingPrograms {
    private NestingPrograms() {
    }

    /** A loop whose body captures {@code w}, a value of the enclosing level (a trace's, a transform's). */
    static Tensor capturing(Tensor x, Tensor w) {
        return Weft.fori(0, 4, x, (i, c) -> c.mul(w).sin().add(w));
    }

    /** The JVP of {@link #capturing} in both arguments. */
    static List<Tensor> jvpEager(Tensor x, Tensor w, Tensor tx, Tensor tw) {
        return Weft.jvp(in -> List.of(capturing(in.get(0), in.get(1))), List.of(x, w), List.of(tx, tw)).tangents();
    }

    @Compile
    static List<Tensor> jvpCompiled(Tensor x, Tensor w, Tensor tx, Tensor tw) {
        return jvpEager(x, w, tx, tw);
    }

    /** A fori inside a cond on a traced predicate, inside a fori. */
    static Tensor nested(Tensor x, Tensor w) {
        return Weft.fori(0, 3, x, (i, c) -> Weft.cond(c.sum().gt(0),
                () -> Weft.fori(0, 2, c, (j, d) -> d.mul(w).tanh().add(0.1)),
                () -> c.neg().exp().mul(w)));
    }

    static Tensor nestedGradEager(Tensor x, Tensor w) {
        return Weft.grad(v -> nested(v, w).sum()).apply(x);
    }

    @Compile
    static Tensor nestedGradCompiled(Tensor x, Tensor w) {
        return nestedGradEager(x, w);
    }

    static List<Tensor> nestedJvpEager(Tensor x, Tensor w, Tensor t) {
        return Weft.jvp(in -> List.of(nested(in.getFirst(), w)), List.of(x), List.of(t)).tangents();
    }

    @Compile
    static List<Tensor> nestedJvpCompiled(Tensor x, Tensor w, Tensor t) {
        return nestedJvpEager(x, w, t);
    }

    /** {@code x} squared by the loop and scaled: {@code sum((x * cos x) * 2)} step by step. */
    static Tensor loop(Tensor x) {
        return Weft.fori(0, 3, x, (i, c) -> c.mul(c.mul(0.5).cos()));
    }

    /** The gradient of the sum of the gradient of {@code loop(x).sum()}: grad of grad through a fori. */
    static Tensor secondEager(Tensor x) {
        return Weft.grad(v -> Weft.grad(u -> loop(u).sum()).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor secondCompiled(Tensor x) {
        return secondEager(x);
    }

    /** Forward over forward through a fori: the second directional derivative along {@code t}. */
    static Tensor jvpOfJvpEager(Tensor x, Tensor t) {
        return Weft.jvp(a -> Weft.jvp(b -> List.of(loop(b.getFirst())), a, List.of(t)).tangents(), List.of(x),
                List.of(t)).tangents().getFirst();
    }

    @Compile
    static Tensor jvpOfJvpCompiled(Tensor x, Tensor t) {
        return jvpOfJvpEager(x, t);
    }

    /** A jvp taken inside a fori body, of a function capturing the loop's carry. */
    static Tensor jvpInsideLoop(Tensor x) {
        return Weft.fori(0, 3, x, (i, c) -> Weft.jvp(in -> List.of(in.getFirst().mul(c).sin()), List.of(c),
                List.of(c)).tangents().getFirst());
    }

    @Compile
    static Tensor jvpInsideLoopCompiled(Tensor x) {
        return jvpInsideLoop(x);
    }
}
