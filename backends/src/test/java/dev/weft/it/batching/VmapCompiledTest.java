package dev.weft.it.batching;

import static dev.weft.it.batching.VmapTest.TOLERANCE;
import static dev.weft.it.batching.VmapTest.cases;
import static dev.weft.it.batching.VmapTest.inAxes;
import static dev.weft.it.batching.VmapTest.inputs;
import static dev.weft.it.batching.VmapTest.listed;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.it.batching.VmapTest.Case;
import dev.weft.testing.TensorAssert;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every case of dsl's VmapTest batched inside {@code @Compile} equals the same batching run eagerly. */
class VmapCompiledTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    static List<Case> vmapCases() {
        return cases();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vmapCases")
    void compiledEqualsEager(Case c) {
        List<int[]> variants = inAxes(c);
        for (int[] in : List.of(variants.getFirst(), variants.get(variants.size() / 2))) {
            List<Tensor> xs = inputs(c, in, c.name().hashCode() + 1);
            String axes = Arrays.stream(in).mapToObj(Integer::toString).collect(Collectors.joining(","));
            Tensor eager = Weft.vmap(listed(c), in, new int[] {0}).apply(xs).getFirst();
            Tensor compiled = xs.size() == 1 ? compiled1(c.name(), axes, xs.get(0))
                    : compiled2(c.name(), axes, xs.get(0), xs.get(1));
            TensorAssert.assertThat(compiled).as("%s, inAxes %s", c, axes).isCloseTo(eager, TOLERANCE);
        }
    }

    @Compile
    static Tensor compiled1(String name, String axes, Tensor a) {
        return vmapped(name, axes, List.of(a));
    }

    @Compile
    static Tensor compiled2(String name, String axes, Tensor a, Tensor b) {
        return vmapped(name, axes, List.of(a, b));
    }

    private static Tensor vmapped(String name, String axes, List<Tensor> xs) {
        Case c = cases().stream().filter(k -> k.name().equals(name)).findFirst().orElseThrow();
        int[] in = Arrays.stream(axes.split(",")).mapToInt(Integer::parseInt).toArray();
        return Weft.vmap(listed(c), in, new int[] {0}).apply(xs).getFirst();
    }
}
