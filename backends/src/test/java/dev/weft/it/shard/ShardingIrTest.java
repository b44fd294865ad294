package dev.weft.it.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import dev.weft.testing.Ranks;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;

/** The communication the partitioner inserts, read from the lowered module's custom calls. */
class ShardingIrTest {
    private static final Pattern CALL = Pattern.compile("call_target_name = \"weft\\.mpi\\.(\\w+)\"");

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor elementwise(Tensor x, Tensor y) {
        return x.mul(y).add(1).exp();
    }

    @Compile
    static Tensor matmul(Tensor a, Tensor b) {
        return a.matmul(b);
    }

    @Compile
    static Tensor sumRows(Tensor x) {
        return x.sum(0);
    }

    @Compile
    static Tensor total(Tensor x) {
        return x.sum();
    }

    @Compile
    static Tensor constrained(Tensor x, Sharding to) {
        return Sharding.constrain(x, to).neg();
    }

    @Compile
    static Tensor wantedEarly(Tensor x, Sharding to) {
        return Sharding.constrain(x.mul(2).exp().sum(1), to).neg();
    }

    @Compile
    static Tensor product(Tensor x, Tensor w, Sharding to) {
        return Sharding.constrain(x.matmul(w).tanh(), to);
    }

    @Compile
    static Tensor transposed(Tensor x, Sharding to) {
        return Sharding.constrain(x.transpose(1, 0), to);
    }

    @Compile
    static Tensor reshaped(Tensor x) {
        return x.reshape(x.shape()[0] * x.shape()[1]).exp().reshape(x.shape()[0], 2, x.shape()[1] / 2);
    }

    @Compile
    static Tensor diffuse(Tensor u) {
        return ShardingTest.smooth(u, 10);
    }

    @Compile
    static Tensor splitProduct(Tensor a, Tensor b, Sharding s) {
        return Sharding.constrain(a.matmul(b), s);
    }

    /** The communication custom calls of {@code method} lowered for these arguments, in order. */
    private static List<String> calls(String method, Object... args) {
        return calls(Weft.lower(ShardingIrTest.class, method, args).toMlir());
    }

    private static List<String> calls(String mlir) {
        List<String> out = new ArrayList<>();
        Matcher m = CALL.matcher(mlir);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Ranks({2, 3})
    void canonicalPartitions(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null), cols = Sharding.of(mesh, null, "x");
        Sharding replicated = Sharding.of(mesh, null, null);
        Tensor x = Sharding.put(ShardingTest.data(7, 5), rows), xc = Sharding.put(ShardingTest.data(7, 5), cols);
        Tensor w = ShardingTest.data(5, 4), wr = Sharding.put(w, rows);
        String elementwise = Weft.lower(ShardingIrTest.class, "elementwise", x, x).toMlir();
        assertThat(calls(elementwise)).as("elementwise").isEmpty();
        assertThat(elementwise).as("the scalar is broadcast to the block, not to the whole").doesNotContain("7x5");
        assertThat(calls("elementwise", x, ShardingTest.data(7, 5))).as("with a replicated operand").isEmpty();
        assertThat(calls("matmul", x, w)).as("row-sharded @ replicated").isEmpty();
        assertThat(calls("sumRows", x)).as("sum over the sharded dimension").containsExactly("allreduce");
        assertThat(calls("sumRows", xc)).as("sum over a replicated dimension").isEmpty();
        String contracted = Weft.lower(ShardingIrTest.class, "matmul", xc, wr).toMlir();
        assertThat(calls(contracted)).as("contracted dimension sharded").containsExactly("allreduce");
        assertThat(contracted).contains("stablehlo.dot");
        assertThat(calls("matmul", xc, w)).as("contracted sharded, replicated rhs sliced").containsExactly("allreduce");
        assertThat(calls("splitProduct", xc, wr, rows)).as("contracted, then split: reduce-scatter")
                .containsExactly("reduce_scatter");
        assertThat(calls("splitProduct", xc, wr, replicated)).as("contracted, then replicated")
                .containsExactly("allreduce");
        assertThat(calls("constrained", x, replicated)).as("replicate 7 rows: uneven blocks")
                .containsExactly("allgatherv");
        assertThat(calls("constrained", Sharding.put(ShardingTest.data(6, 5), rows), replicated))
                .as("replicate 6 rows: even blocks").containsExactly("allgather");
        String sliced = Weft.lower(ShardingIrTest.class, "constrained", ShardingTest.data(7, 5), rows).toMlir();
        assertThat(calls(sliced)).as("shard a replicated dimension: a local slice").isEmpty();
        assertThat(sliced).contains("stablehlo.slice");
        assertThat(calls("constrained", x, cols)).as("rows to columns").containsExactly("alltoall");
    }

    @Ranks({2, 3})
    void aConstraintIsPropagatedBackToTheOperandsAndTransposeIsAnAlltoall(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null);
        String mlir = Weft.lower(ShardingIrTest.class, "wantedEarly", ShardingTest.data(7, 5), Sharding.of(mesh, "x"))
                .toMlir();
        assertThat(calls(mlir)).isEmpty();
        assertThat(mlir.lines().filter(l -> l.contains("stablehlo.exponential")).toList()).as(mlir)
                .singleElement().asString().doesNotContain("7x5");
        String product = Weft.lower(ShardingIrTest.class, "product", ShardingTest.data(8, 5),
                ShardingTest.data(5, 6), rows).toMlir();
        assertThat(calls(product)).isEmpty();
        assertThat(product.lines().filter(l -> l.contains("stablehlo.dot")).toList()).as(product)
                .singleElement().asString().doesNotContain("8x6");
        Tensor x = Sharding.put(ShardingTest.data(7, 5), rows);
        assertThat(calls("transposed", x, Sharding.of(mesh, "x", null))).as("a split dimension transposed in place")
                .containsExactly("alltoall");
        assertThat(calls("transposed", x, Sharding.of(mesh, null, "x"))).as("the split follows the dimension")
                .isEmpty();
    }

    @Ranks({2, 4})
    void reshapesThatKeepTheBlocksWholeNeedNoCommunication(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor x = Sharding.put(ShardingTest.data(8, 4), Sharding.of(mesh, "x", null));
        assertThat(calls("reshaped", x)).isEmpty();
        Tensor y = Sharding.put(ShardingTest.data(7, 4), Sharding.of(mesh, "x", null));
        assertThat(calls("reshaped", y)).as("7 rows: blocks of the merged dimension do not line up")
                .contains("allgatherv");
    }

    /**
     * 10 rows over 4 ranks are blocks of 3, 3, 3 and 1 rows: gathered by one allgatherv of exactly those rows, with
     * no padding before it and no slice of padding after, along either dimension; the result is the unsharded one.
     */
    @Ranks({4})
    void unevenBlocksAreGatheredByOneAllgathervWithoutPadding(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding replicated = Sharding.of(mesh, null, null);
        Tensor whole = ShardingTest.data(10, 6);
        Tensor rows = Sharding.put(whole, Sharding.of(mesh, "x", null));
        Tensor cols = Sharding.put(whole.transpose(1, 0), Sharding.of(mesh, null, "x"));
        for (Tensor x : List.of(rows, cols)) {
            String mlir = Weft.lower(ShardingIrTest.class, "constrained", x, replicated).toMlir();
            assertThat(calls(mlir)).containsExactly("allgatherv");
            assertThat(mlir).contains("counts = array<i64: 3, 3, 3, 1>").doesNotContain("stablehlo.pad")
                    .doesNotContain("12x6").doesNotContain("6x12");
        }
        assertThat(Sharding.gather(constrained(rows, replicated)).toDoubleArray())
                .containsExactly(whole.neg().toDoubleArray());
        assertThat(Sharding.gather(constrained(cols, replicated)).toDoubleArray())
                .containsExactly(whole.transpose(1, 0).neg().toDoubleArray());
        assertThat(Sharding.gather(rows).toDoubleArray()).as("eager").containsExactly(whole.toDoubleArray());
        Tensor even = Sharding.put(ShardingTest.data(8, 6), Sharding.of(mesh, "x", null));
        assertThat(calls("constrained", even, replicated)).as("even blocks").containsExactly("allgather");
    }

    @Ranks({3})
    void aStencilInALoopExchangesHalosWithTheNeighboursOnly(Comm world) {
        Tensor u = Sharding.put(ShardingTest.data(12, 4), Sharding.of(Mesh.of(world, "x"), "x", null));
        String mlir = Weft.lower(ShardingIrTest.class, "diffuse", u).toMlir();
        assertThat(mlir).contains("stablehlo.while");
        assertThat(calls(mlir)).doesNotContain("allgather", "allreduce").contains("isend", "irecv", "wait");
        Matcher peers = Pattern.compile("weft\\.mpi\\.i(?:send|recv)\".*?peer = (\\d+)").matcher(mlir);
        int me = world.rank();
        while (peers.find()) {
            assertThat(Math.abs(Integer.parseInt(peers.group(1)) - me)).as(peers.group()).isEqualTo(1);
        }
    }

    @Ranks({4})
    void aTotalOverBothAxesOfATwoDimensionalMeshIsOneAllreduce(Comm world) {
        Mesh mesh = Mesh.of(world, new int[] {2, 2}, "x", "y");
        Tensor x = Sharding.put(ShardingTest.data(6, 5), Sharding.of(mesh, "x", "y"));
        assertThat(calls("total", x)).containsExactly("allreduce");
        assertThat(calls("sumRows", x)).as("over x only").containsExactly("allreduce");
        assertThat(calls("elementwise", x, x)).isEmpty();
    }
}
