package dev.weft.it.tree;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.ValueAndGrad;
import dev.weft.Vjp;
import dev.weft.Weft;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Trees of tensors (records, lists, maps, arrays) through {@code grad}, {@code valueAndGrad}, {@code fori},
 * {@code cond} and {@code whileLoop}: gradients equal those of the same function of the flattened leaves, structures
 * and constants survive, and bad trees are errors naming the path and the line.
 */
class TreesTest {
    /** A two-layer network's parameters; {@code name} is a constant of the structure. */
    record Mlp(Tensor w1, Tensor b1, Tensor w2, Tensor b2, String name) {
    }

    static final Tensor X = Tensor.of(new double[] {0.5, -1, 2, 0.25, 1.5, -0.5}, 3, 2);
    static final Tensor Y = Tensor.of(new double[] {1, -1, 0.5}, 3, 1);

    static Mlp params() {
        return new Mlp(Tensor.of(new double[] {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, 2, 3), Tensor.of(new double[] {0, 0.1,
                -0.1}, 3), Tensor.of(new double[] {0.7, -0.3, 0.2}, 3, 1), Tensor.of(new double[] {0.05}, 1), "tiny");
    }

    static Tensor loss(Mlp p) {
        Tensor h = X.matmul(p.w1()).add(p.b1()).tanh();
        Tensor r = h.matmul(p.w2()).add(p.b2()).sub(Y);
        return r.mul(r).mean();
    }

    @Test
    void theGradientOfARecordIsARecordOfTheLeavesGradients() {
        Mlp p = params();
        Mlp g = Weft.grad(p, TreesTest::loss);
        assertThat(g.name()).isEqualTo("tiny");
        Vjp v = Weft.vjp(in -> List.of(loss(new Mlp(in.get(0), in.get(1), in.get(2), in.get(3), "tiny"))),
                List.of(p.w1(), p.b1(), p.w2(), p.b2()));
        List<Tensor> ref = v.pullback(List.of(Tensor.scalar(DType.F64, 1)));
        List<Tensor> got = List.of(g.w1(), g.b1(), g.w2(), g.b2());
        for (int i = 0; i < 4; i++) {
            assertThat(got.get(i).shape()).containsExactly(ref.get(i).shape());
            assertThat(got.get(i).toDoubleArray()).containsExactly(ref.get(i).toDoubleArray());
        }
        ValueAndGrad.Of<Mlp> vg = Weft.valueAndGrad(p, TreesTest::loss);
        assertThat(vg.value().item()).isEqualTo(loss(p).item());
        assertThat(vg.grad().w1().toDoubleArray()).containsExactly(g.w1().toDoubleArray());
    }

    @Test
    void listsAndMapsKeepTheirOrderAndIntegerLeavesPassZeros() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("b", Tensor.of(new double[] {1, 2}));
        m.put("a", Tensor.of(new double[] {3}));
        m.put("steps", Tensor.of(new int[] {4}));
        Map<String, Tensor> g = Weft.grad(m, t -> t.get("b").mul(t.get("b")).sum().add(t.get("a").sum().mul(5)));
        assertThat(g.keySet()).containsExactly("b", "a", "steps");
        assertThat(g.get("b").toDoubleArray()).containsExactly(2, 4);
        assertThat(g.get("a").toDoubleArray()).containsExactly(5);
        assertThat(g.get("steps").toIntArray()).containsExactly(0);
        List<Tensor> l = List.of(Tensor.scalar(DType.F64, 3), Tensor.scalar(DType.F64, -2));
        assertThat(Weft.grad(l, t -> t.get(0).mul(t.get(1))).stream().map(Tensor::item).toList())
                .containsExactly(-2.0, 3.0);
    }

    @Test
    void loopsAndBranchesCarryTrees() {
        Mlp p = params();
        // plain gradient descent on the record, in a fori
        Mlp trained = Weft.fori(0, 20, p, (i, q) -> {
            Mlp g = Weft.grad(q, TreesTest::loss);
            return Trees.zip(q, g, (w, dw) -> w.sub(dw.mul(0.1)));
        });
        assertThat(trained.name()).isEqualTo("tiny");
        assertThat(loss(trained).item()).isLessThan(loss(p).item());
        Mlp chosen = Weft.cond(Tensor.scalar(DType.BOOL, 0), () -> p, () -> Trees.map(p, t -> t.mul(2)));
        assertThat(chosen.w2().toDoubleArray()).containsExactly(1.4, -0.6, 0.4);
        record State(Tensor x, Tensor n) {
        }
        State s = Weft.whileLoop(st -> st.x().lt(100), st -> new State(st.x().mul(3), st.n().add(1)),
                new State(Tensor.scalar(DType.F64, 1), Tensor.scalar(DType.I32, 0)));
        assertThat(s.x().item()).isEqualTo(243);
        assertThat(s.n().item()).isEqualTo(5);
    }

    @Test
    void badTreesAreErrorsNamingThePathAndTheLine() {
        Mlp broken = new Mlp(null, Tensor.of(new double[] {1}), Tensor.of(new double[] {1}),
                Tensor.of(new double[] {1}), "x");
        assertThatThrownBy(() -> Weft.grad(broken, q -> q.b1().sum())).isInstanceOf(ShapeException.class)
                .hasMessageStartingWith("TreesTest.java:").hasMessageContaining("at.w1 is null");
        List<Object> cyclic = new ArrayList<>();
        cyclic.add(Tensor.of(new double[] {1}));
        cyclic.add(cyclic);
        assertThatThrownBy(() -> Trees.leaves(cyclic)).isInstanceOf(ShapeException.class)
                .hasMessageContaining("tree[1] contains itself");
        record Odd(Tensor t, Object other) {
        }
        record Throws(Tensor t) {
            @Override
            public Tensor t() {
                throw new IllegalStateException("no t today");
            }
        }
        List<Tensor> kept = new ArrayList<>(List.of(X));
        assertThatThrownBy(() -> Trees.structure(List.of(Y, new Throws(Y)), kept, "state", null))
                .isInstanceOf(ShapeException.class).hasMessageStartingWith("TreesTest.java:")
                .hasMessageEndingWith("state[1].t threw java.lang.IllegalStateException: no t today");
        assertThat(kept).as("the leaves before the bad tree, and none of it").containsExactly(X);
        assertThatThrownBy(() -> Trees.leaves(new Odd(Tensor.of(new double[] {1}), new StringBuilder())))
                .hasMessageContaining("tree.other is a java.lang.StringBuilder");
        assertThatThrownBy(() -> Weft.fori(0, 2, params(), (i, q) -> new Mlp(q.w1(), q.b1(), q.w2(), q.b2(),
                "renamed"))).isInstanceOf(ShapeException.class).hasMessageContaining("fori: the body returns");
        assertThatThrownBy(() -> Weft.cond(Tensor.scalar(DType.BOOL, 1), () -> List.of(X), () -> List.of(X, Y)))
                .isInstanceOf(ShapeException.class).hasMessageContaining("different structures");
    }

    @Test
    void mapAndZipKeepStructure() {
        double[] scaled = Trees.map(params(), t -> t.mul(10)).b2().toDoubleArray();
        assertThat(scaled[0]).isCloseTo(0.5, within(1e-15));
        assertThatThrownBy(() -> Trees.zip(List.of(X), List.of(X, Y), Tensor::add))
                .isInstanceOf(ShapeException.class).hasMessageContaining("differ in structure");
    }
}
