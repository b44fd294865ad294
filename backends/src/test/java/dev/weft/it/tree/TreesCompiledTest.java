package dev.weft.it.tree;

import static dev.weft.it.tree.TreesTest.X;
import static dev.weft.it.tree.TreesTest.Y;
import static dev.weft.it.tree.TreesTest.loss;
import static dev.weft.it.tree.TreesTest.params;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.ValueAndGrad;
import dev.weft.Weft;
import dev.weft.it.tree.TreesTest.Mlp;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code @Compile} methods take and return trees (dsl's TreesTest has the eager cases and the parameters). */
class TreesCompiledTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** One gradient step on a record of parameters, compiled: the record in, the record and the loss out. */
    @Compile
    static Map<String, Object> sgdStep(Mlp p, Tensor lr) {
        ValueAndGrad.Of<Mlp> vg = Weft.valueAndGrad(p, TreesTest::loss);
        Mlp next = Trees.zip(p, vg.grad(), (w, g) -> w.sub(g.mul(lr)));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("params", next);
        out.put("loss", vg.value());
        return out;
    }

    @Test
    void compiledMethodsTakeAndReturnTrees() {
        Mlp p = params();
        Tensor lr = Tensor.scalar(DType.F64, 0.1);
        Map<String, Object> compiled = sgdStep(p, lr);
        Mlp next = (Mlp) compiled.get("params");
        assertThat(next.name()).isEqualTo("tiny");
        Mlp g = Weft.grad(p, TreesTest::loss);
        assertThat(next.w1().toDoubleArray()).containsExactly(p.w1().sub(g.w1().mul(0.1)).toDoubleArray(),
                within(1e-15));
        assertThat(((Tensor) compiled.get("loss")).item()).isCloseTo(loss(p).item(), within(1e-15));
        // a second call with the same structure and shapes runs the cached program
        Map<String, Object> again = sgdStep(next, lr);
        assertThat(loss((Mlp) again.get("params")).item()).isLessThan(loss(next).item());
        assertThat(sumCompiled(List.of(X, Y.reshape(3)), new Tensor[] {Y})).isInstanceOf(Tensor.class);
        assertThat(((Tensor) sumCompiled(List.of(X, Y.reshape(3)), new Tensor[] {Y})).item())
                .isCloseTo(X.sum().add(Y.sum().mul(2)).item(), within(1e-12));
    }

    @Compile
    static Object sumCompiled(List<Tensor> parts, Tensor[] more) {
        Tensor s = more[0].sum();
        for (Tensor t : parts) {
            s = s.add(t.sum());
        }
        return s;
    }
}
