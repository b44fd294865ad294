package dev.weft.it.shard;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import dev.weft.testing.Ranks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/**
 * Global programs on sharded tensors equal the same programs on whole arrays, on 1 to 4 fake ranks, with sizes that
 * do not divide evenly and on a 2-D mesh; put, gather and localBlock follow the documented block layout.
 */
class ShardingTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** A deterministic f64 tensor of {@code shape} with distinct values. */
    static Tensor data(long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        double[] v = new double[(int) n];
        for (int i = 0; i < v.length; i++) {
            v[i] = Math.sin(i * 0.7 + shape.length) + 0.1 * i;
        }
        return Tensor.of(v, shape);
    }

    @Compile
    static Tensor elementwise(Tensor x, Tensor y) {
        return x.mul(2).add(y.exp()).sub(1.5).tanh();
    }

    @Compile
    static Tensor sumRows(Tensor x) {
        return x.sum(0);
    }

    @Compile
    static Tensor total(Tensor x) {
        return x.mul(x).sum();
    }

    @Compile
    static Tensor extremes(Tensor x) {
        return x.max(0).sub(x.min(0));
    }

    @Compile
    static Tensor looped(Tensor x) {
        return Weft.fori(0, 3, x, (i, c) -> c.mul(0.5).add(c.sum(0)));
    }

    /** A second difference along rows, zero on the first and last row: shifted slices, then a pad. */
    @Compile
    static Tensor stencil(Tensor u) {
        long n = u.shape()[0], m = u.shape()[1];
        Tensor up = u.slice(new long[] {0, 0}, new long[] {n - 2, m});
        Tensor mid = u.slice(new long[] {1, 0}, new long[] {n - 1, m});
        Tensor down = u.slice(new long[] {2, 0}, new long[] {n, m});
        return up.add(down).sub(mid.mul(2)).pad(new long[] {1, 0}, new long[] {1, 0});
    }

    @Compile
    static Tensor padded(Tensor u) {
        return u.pad(new long[] {3, 1}, new long[] {2, 0}, 0.5).exp();
    }

    @Compile
    static Tensor joined(Tensor a, Tensor b) {
        return Tensor.concat(0, a, b.mul(2), a.slice(new long[] {2, 0}, new long[] {3, a.shape()[1]}));
    }

    /** Explicit diffusion along rows in a loop, the boundary rows held fixed by a concatenation. */
    @Compile
    static Tensor diffuse(Tensor u, int steps) {
        return Weft.fori(0, steps, u, (i, c) -> {
            long n = c.shape()[0], m = c.shape()[1];
            Tensor inner = c.slice(new long[] {1, 0}, new long[] {n - 1, m});
            Tensor lap = c.slice(new long[] {0, 0}, new long[] {n - 2, m}).add(c.slice(new long[] {2, 0},
                    new long[] {n, m})).sub(inner.mul(2));
            return Tensor.concat(0, c.slice(new long[] {0, 0}, new long[] {1, m}), inner.add(lap.mul(0.2)),
                    c.slice(new long[] {n - 1, 0}, new long[] {n, m}));
        });
    }

    /** {@link #diffuse} with the update padded by zeros instead of concatenated with the boundary rows. */
    @Compile
    static Tensor smooth(Tensor u, int steps) {
        return Weft.fori(0, steps, u, (i, c) -> c.add(stencil(c).mul(0.2)));
    }

    /** Five-point diffusion steps on a 2-D grid with zero boundaries: pads and shifted slices in both dimensions. */
    @Compile
    static Tensor heat(Tensor u, int steps) {
        return Weft.fori(0, steps, u, (i, g) -> {
            long n = g.shape()[0], m = g.shape()[1];
            Tensor p = g.pad(new long[] {1, 1}, new long[] {1, 1});
            Tensor near = p.slice(new long[] {0, 1}, new long[] {n, m + 1})
                    .add(p.slice(new long[] {2, 1}, new long[] {n + 2, m + 1}))
                    .add(p.slice(new long[] {1, 0}, new long[] {n + 1, m}))
                    .add(p.slice(new long[] {1, 2}, new long[] {n + 1, m + 2}));
            return g.add(near.sub(g.mul(4)).mul(0.1));
        });
    }

    /** The gradient of a loss of a row-sharded batch with respect to replicated weights. */
    @Compile
    static Tensor gradient(Tensor x, Tensor w) {
        return Weft.grad(v -> x.matmul(v).tanh().sum()).apply(w);
    }

    /** {@link #gradient} with the hidden layer constrained to the given sharding. */
    @Compile
    static Tensor constrainedGradient(Tensor x, Tensor w, Sharding hidden) {
        return Weft.grad(v -> Sharding.constrain(x.matmul(v), hidden).tanh().sum()).apply(w);
    }

    @Compile
    static Tensor splitProduct(Tensor a, Tensor b, Sharding s) {
        return Sharding.constrain(a.matmul(b), s).exp();
    }

    @Compile
    static Tensor communicates(Tensor x, Comm comm) {
        return comm.allreduce(x.mul(2), ReduceOp.SUM);
    }

    @Compile
    static Tensor constrainsInABranch(Tensor x, Sharding to) {
        return Weft.cond(x.sum().gt(0), () -> Sharding.constrain(x.mul(2), to), () -> x.exp()).add(1);
    }

    /** Branches that reduce, shift and reshape split dimensions; a predicate computed from sharded data. */
    @Compile
    static Tensor branches(Tensor x, Tensor y) {
        Tensor s = Weft.cond(x.sum().gt(y.max()), () -> x.mul(y).sum(1), () -> x.slice(new long[] {1, 0},
                new long[] {x.shape()[0], 6}).pad(new long[] {0, 0}, new long[] {1, 0}).sum(1));
        return Weft.cond(s.min().lt(0), () -> s.neg(), () -> s);
    }

    /** Reshapes of a split leading dimension: kept, merged with the next, split again, and one that cannot stay. */
    @Compile
    static Tensor reshaped(Tensor x) {
        long n = x.shape()[0];
        Tensor kept = x.reshape(n, 3, 2).sum(2);
        Tensor merged = x.reshape(n * 6).mul(2).reshape(n, 6);
        Tensor moved = x.reshape(6, n).transpose(1, 0).sum(1);
        return kept.sum(1).add(merged.sum(1)).add(moved);
    }

    @Compile
    static Tensor matmul(Tensor a, Tensor b) {
        return a.matmul(b);
    }

    @Compile
    static Tensor layers(Tensor x, Tensor w, Tensor bias) {
        Tensor h = x.matmul(w).add(bias).tanh();
        return h.transpose(1, 0).max(1);
    }

    /** Elementwise work and a reduction whose result is constrained: the layout is wanted back at the operands. */
    @Compile
    static Tensor wanted(Tensor x, Tensor y, Sharding to) {
        Tensor z = x.mul(2).add(y.transpose(1, 0)).exp();
        Tensor columns = Sharding.constrain(z, Sharding.of(to.mesh(), null, to.axis(0)));
        return Sharding.constrain(z.sum(1), to).add(columns.sum(0));
    }

    @Compile
    static Tensor constrained(Tensor x, Sharding to) {
        return Sharding.constrain(x.add(1), to).mul(3);
    }

    @Ranks({1, 2, 3, 4})
    void putKeepsTheDocumentedBlockAndGatherGivesTheWhole(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor full = data(10, 3);
        Tensor rows = Sharding.put(full, Sharding.of(mesh, "x", null));
        int n = world.size(), r = world.rank();
        long c = (10 + n - 1) / n, start = Math.min(r * c, 10), end = Math.min(start + c, 10);
        assertThat(rows.shape()).containsExactly(10, 3);
        assertThat(Sharding.localBlock(rows)).isEqualTo(full.slice(new long[] {start, 0}, new long[] {end, 3}));
        assertThat(Sharding.gather(rows)).isEqualTo(full);
        Tensor cols = Sharding.put(full, Sharding.of(mesh, null, "x"));
        assertThat(Sharding.gather(cols)).isEqualTo(full);
        assertThat(Sharding.gather(Sharding.put(rows, Sharding.of(mesh, null, "x")))).isEqualTo(full);
        assertThat(Sharding.localBlock(Sharding.put(rows, Sharding.of(mesh, null, "x"))))
                .isEqualTo(Sharding.localBlock(cols));
    }

    /** Each rank passes only its own block (uneven over 3 and 4 ranks): the array put would have made. */
    @Ranks({1, 2, 3, 4})
    void fromBlocksBuildsTheArrayFromEachRanksBlock(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null);
        Tensor full = data(10, 3);
        Tensor mine = Sharding.localBlock(Sharding.put(full, rows));
        Tensor built = Sharding.fromBlocks(mine, rows, 10, 3);
        assertThat(built.shape()).containsExactly(10, 3);
        assertThat(Sharding.gather(built)).isEqualTo(full);
        assertThat(total(built)).isCloseTo(total(full), 1e-12);
        if (world.size() > 1) {
            assertThatThrownBy(() -> Sharding.fromBlocks(full, rows, 10, 3)).isInstanceOf(WeftException.class)
                    .hasMessageContaining("this rank's block of [10, 3]").hasMessageStartingWith("ShardingTest.java:");
        }
    }

    /**
     * Ranks whose global arrays differ would each keep a block of another array and agree on a wrong sum: a
     * {@code put}, and the first call of a compiled program on sharded tensors, check the global shapes.
     */
    @Ranks({2, 3})
    void ranksMustShardArraysOfOneGlobalShape(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null);
        Tensor mine = data(world.rank() == 0 ? 10 : 12, 3);
        int line = lineAfter();
        assertThatThrownBy(() -> Sharding.put(mine, rows)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("ShardingTest.java:" + line + ": Sharding.put: the ranks of Mesh")
                .hasMessageContaining("rank 0 f64[10,3] split [x, null] over Mesh")
                .hasMessageContaining("rank 1 f64[12,3] split [x, null]");
        Tensor agreed = Sharding.put(data(4, 6), rows);
        Tensor narrowed = agreed.slice(new long[] {0, 0}, new long[] {4, world.rank() == 0 ? 3 : 2});
        line = lineAfter();
        assertThatThrownBy(() -> total(narrowed)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("ShardingTest.java:" + line + ": the sharded arguments of")
                .hasMessageContaining("rank 0 f64[4,3] split [x, null]")
                .hasMessageContaining("rank 1 f64[4,2] split [x, null]");
        assertThat(total(agreed)).isCloseTo(total(data(4, 6)), 1e-12);
    }

    /** The line after the caller's. */
    private static int lineAfter() {
        return StackWalker.getInstance().walk(f -> f.skip(1).findFirst()).orElseThrow().getLineNumber() + 1;
    }

    @Ranks({4})
    void blocksOfTenOverFourRanksAreThreeThreeThreeOne(Comm world) {
        Tensor t = Sharding.put(Tensor.arange(DType.I32, 10), Sharding.of(Mesh.of(world, "x"), "x"));
        assertThat(Sharding.localBlock(t).shape()[0]).isEqualTo(new long[] {3, 3, 3, 1}[world.rank()]);
    }

    @Ranks({4})
    void aRankMayHoldAnEmptyBlock(Comm world) {
        Sharding rows = Sharding.of(Mesh.of(world, "x"), "x", null);
        Tensor x = data(5, 3), xs = Sharding.put(x, rows);
        assertThat(Sharding.localBlock(xs).shape()[0]).isEqualTo(new long[] {2, 2, 1, 0}[world.rank()]);
        assertThat(Sharding.gather(xs)).isEqualTo(x);
        assertThat(Sharding.gather(elementwise(xs, xs))).isCloseTo(elementwise(x, x), 1e-12);
        assertThat(Sharding.gather(sumRows(xs))).isCloseTo(sumRows(x), 1e-12);
        assertThat(total(xs)).isCloseTo(total(x), 1e-12);
        assertThat(Sharding.gather(extremes(xs))).isCloseTo(extremes(x), 1e-12);
    }

    @Ranks({1, 2, 3, 4})
    void aProductWithASplitContractionConstrainedToASplitLayout(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor a = data(7, 5), b = data(5, 6).mul(0.2);
        Tensor as = Sharding.put(a, Sharding.of(mesh, null, "x")), bs = Sharding.put(b, Sharding.of(mesh, "x", null));
        for (Sharding s : List.of(Sharding.of(mesh, "x", null), Sharding.of(mesh, null, "x"),
                Sharding.of(mesh, null, null))) {
            Tensor r = splitProduct(as, bs, s);
            assertThat(Sharding.of(r)).isEqualTo(s.isReplicated() ? null : s);
            assertThat(Sharding.gather(r)).isCloseTo(a.matmul(b).exp(), 1e-12);
        }
    }

    @Ranks({1, 3})
    void aLoopOnShardedOperandsEqualsItOnWholeArrays(Comm world) {
        Tensor x = data(7, 5), xs = Sharding.put(x, Sharding.of(Mesh.of(world, "x"), "x", null));
        assertThat(Sharding.gather(looped(xs))).isCloseTo(looped(x), 1e-12);
    }

    @Ranks({1, 2, 3, 4})
    void slicesPadsAndConcatenationsAlongASplitDimension(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor u = data(10, 3), b = data(4, 3);
        for (Sharding s : List.of(Sharding.of(mesh, "x", null), Sharding.of(mesh, null, "x"))) {
            Tensor us = Sharding.put(u, s);
            assertThat(Sharding.gather(stencil(us))).isCloseTo(stencil(u), 1e-12);
            assertThat(Sharding.gather(joined(us, Sharding.put(b, s)))).isCloseTo(joined(u, b), 1e-12);
            assertThat(Sharding.gather(joined(us, b))).isCloseTo(joined(u, b), 1e-12);
            Tensor d = diffuse(us, 5);
            assertThat(Sharding.of(d)).isEqualTo(s);
            assertThat(Sharding.gather(d)).isCloseTo(diffuse(u, 5), 1e-12);
            assertThat(Sharding.gather(smooth(us, 5))).isCloseTo(smooth(u, 5), 1e-12);
            assertThat(Sharding.gather(padded(us))).isCloseTo(padded(u), 1e-12);
        }
    }

    @Ranks({4})
    void aStencilOnATwoDimensionalMeshWithUnevenBlocks(Comm world) {
        Mesh mesh = Mesh.of(world, new int[] {2, 2}, "x", "y");
        Tensor u = data(11, 9);
        for (Sharding s : List.of(Sharding.of(mesh, "x", "y"), Sharding.of(mesh, "y", "x"),
                Sharding.of(mesh, null, "x"))) {
            Tensor h = heat(Sharding.put(u, s), 6);
            assertThat(Sharding.of(h)).isEqualTo(s);
            assertThat(Sharding.gather(h)).isCloseTo(heat(u, 6), 1e-12);
        }
    }

    @Ranks({1, 3, 4})
    void theGradientOfAShardedProgramEqualsItOnWholeArrays(Comm world) {
        Tensor x = data(7, 5), w = data(5, 2).mul(0.3);
        Tensor xs = Sharding.put(x, Sharding.of(Mesh.of(world, "x"), "x", null));
        assertThat(Sharding.gather(gradient(xs, w))).isCloseTo(gradient(x, w), 1e-12);
        Mesh mesh = Sharding.of(xs).mesh();
        for (Sharding hidden : List.of(Sharding.of(mesh, null, "x"), Sharding.of(mesh, null, null))) {
            assertThat(Sharding.gather(constrainedGradient(xs, w, hidden))).isCloseTo(gradient(x, w), 1e-12);
            assertThat(Sharding.gather(constrainedGradient(x, w, hidden))).isCloseTo(gradient(x, w), 1e-12);
        }
    }

    @Ranks({2})
    void unsupportedUsesInsideCompiledProgramsNameTheLine(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor xs = Sharding.put(data(6), Sharding.of(mesh, "x"));
        assertThatThrownBy(() -> communicates(xs, world)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("ShardingTest.java:" + lineOf("comm.allreduce(x.mul(2)"))
                .hasMessageContaining("allreduce cannot run on sharded tensors");
        Tensor other = Sharding.put(data(6), Sharding.of(Mesh.of(world, "y"), "y"));
        assertThatThrownBy(() -> elementwise(xs, other)).isInstanceOf(WeftException.class)
                .hasMessageContaining("different meshes");
        assertThatThrownBy(() -> Sharding.of(mesh, "x", "x")).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("ShardingTest.java:").hasMessageContaining("splits two dimensions");
        assertThatThrownBy(() -> Sharding.put(data(6), Sharding.of(mesh, "x", null)))
                .isInstanceOf(WeftException.class).hasMessageContaining("lays out 2 dimensions");
    }

    /** The line of this file that holds {@code text} (once). */
    private static int lineOf(String text) {
        try {
            List<String> lines = Files.readAllLines(Path.of("src/test/java/dev/weft/it/shard/ShardingTest.java"));
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(text)) {
                    return i + 1;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalArgumentException(text);
    }

    @Ranks({1, 2, 3, 4})
    void eagerOperationsOnShardedTensorsArePartitionedAtOnce(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null), cols = Sharding.of(mesh, null, "x");
        Tensor x = data(7, 5), w = data(5, 3).mul(0.2);
        Tensor xs = Sharding.put(x, rows);
        Tensor e = xs.mul(2).add(x.exp()).tanh();
        assertThat(Sharding.of(e)).isEqualTo(rows);
        assertThat(Sharding.gather(e)).isCloseTo(x.mul(2).add(x.exp()).tanh(), 1e-12);
        assertThat(xs.sum()).isCloseTo(x.sum(), 1e-12);
        assertThat(Sharding.gather(xs.sum(0))).isCloseTo(x.sum(0), 1e-12);
        assertThat(Sharding.gather(Sharding.put(x, cols).matmul(Sharding.put(w, rows)))).isCloseTo(x.matmul(w), 1e-12);
        assertThat(Sharding.gather(xs.slice(new long[] {1, 0}, new long[] {7, 5}).pad(new long[] {0, 0},
                new long[] {1, 0}))).as("a shift: a halo exchange").isEqualTo(x.slice(new long[] {1, 0},
                new long[] {7, 5}).pad(new long[] {0, 0}, new long[] {1, 0}));
        Tensor looped = Weft.fori(0, 3, xs, (i, c) -> c.mul(0.5).add(xs.sum(0)));
        assertThat(Sharding.of(looped)).isEqualTo(rows);
        assertThat(Sharding.gather(looped)).isCloseTo(Weft.fori(0, 3, x, (i, c) -> c.mul(0.5).add(x.sum(0))), 1e-12);
    }

    @Ranks({2})
    void readingOrDifferentiatingAShardedTensorEagerlyNamesTheLine(Comm world) {
        Tensor t = Sharding.put(data(6), Sharding.of(Mesh.of(world, "x"), "x"));
        assertThatThrownBy(t::toDoubleArray).isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("ShardingTest.java:").hasMessageContaining("Sharding.gather");
        assertThatThrownBy(() -> Weft.grad(v -> v.mul(t).sum()).apply(data(6)))
                .isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("ShardingTest.java:" + lineOf("Weft.grad(v -> v.mul(t).sum())"))
                .hasMessageContaining("sharded tensor f64[6]").hasMessageContaining("@Compile");
    }

    @Ranks({1, 2, 3, 4})
    void globalProgramsEqualTheSameProgramsOnWholeArrays(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null), cols = Sharding.of(mesh, null, "x");
        Sharding replicated = Sharding.of(mesh, null, null);
        Tensor x = data(7, 5), y = data(7, 5).mul(0.3), w = data(5, 6).mul(0.2), bias = data(6);
        for (Sharding s : List.of(rows, cols, replicated)) {
            Tensor xs = Sharding.put(x, s);
            Tensor e = elementwise(xs, Sharding.put(y, rows));
            assertThat(Sharding.gather(e)).isCloseTo(elementwise(x, y), 1e-12);
            assertThat(Sharding.gather(sumRows(xs))).isCloseTo(sumRows(x), 1e-12);
            assertThat(total(xs)).isCloseTo(total(x), 1e-12);
            assertThat(Sharding.gather(matmul(xs, Sharding.put(w, rows)))).isCloseTo(matmul(x, w), 1e-12);
            assertThat(Sharding.gather(layers(xs, w, bias))).isCloseTo(layers(x, w, bias), 1e-12);
            for (Sharding to : List.of(rows, cols, replicated)) {
                assertThat(Sharding.gather(constrained(xs, to))).isCloseTo(Sharding.gather(constrained(x, to)), 1e-12);
            }
        }
    }

    @Ranks({1, 2, 3, 4})
    void layoutsWantedByConstraintsGiveTheSameResults(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Tensor x = data(6, 6), y = data(6, 6).mul(0.1);
        for (Sharding xs : List.of(Sharding.of(mesh, "x", null), Sharding.of(mesh, null, "x"),
                Sharding.of(mesh, null, null))) {
            for (Sharding ys : List.of(Sharding.of(mesh, "x", null), Sharding.of(mesh, null, null))) {
                for (Sharding to : List.of(Sharding.of(mesh, "x"), Sharding.of(mesh, (String) null))) {
                    Tensor r = wanted(Sharding.put(x, xs), Sharding.put(y, ys), to);
                    assertThat(Sharding.gather(r)).isCloseTo(wanted(x, y, Sharding.of(mesh, (String) null)), 1e-12);
                    Sharding two = Sharding.of(mesh, to.axis(0), null);
                    assertThat(Sharding.gather(splitProduct(Sharding.put(x, xs), Sharding.put(y, ys), two)))
                            .isCloseTo(x.matmul(y).exp(), 1e-12);
                }
            }
        }
    }

    @Ranks({1, 2, 3, 4})
    void branchesAndReshapesOnSplitDimensions(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        for (long rows : new long[] {8, 7}) {
            Tensor x = data(rows, 6), y = data(rows, 6).mul(-0.5);
            for (Sharding s : List.of(Sharding.of(mesh, "x", null), Sharding.of(mesh, null, "x"))) {
                Tensor xs = Sharding.put(x, s);
                assertThat(Sharding.gather(branches(xs, Sharding.put(y, s)))).isCloseTo(branches(x, y), 1e-12);
                assertThat(Sharding.gather(branches(xs, y.neg()))).isCloseTo(branches(x, y.neg()), 1e-12);
                assertThat(Sharding.gather(reshaped(xs))).isCloseTo(reshaped(x), 1e-12);
                for (Sharding to : List.of(s, Sharding.of(mesh, null, null))) {
                    for (Tensor sign : List.of(Tensor.scalar(DType.F64, 1), Tensor.scalar(DType.F64, -1))) {
                        Tensor whole = x.mul(sign);
                        Tensor expected = (whole.sum().item() > 0 ? whole.mul(2) : whole.exp()).add(1);
                        assertThat(Sharding.gather(constrainsInABranch(xs.mul(sign), to))).isCloseTo(expected, 1e-12);
                        assertThat(Sharding.gather(constrainsInABranch(whole, to))).isCloseTo(expected, 1e-12);
                    }
                }
            }
        }
    }

    @Ranks({2, 3})
    void resultsKeepTheirSharding(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null);
        Tensor e = elementwise(Sharding.put(data(7, 5), rows), Sharding.put(data(7, 5), rows));
        assertThat(Sharding.of(e)).isEqualTo(rows);
        assertThat(e.shape()).containsExactly(7, 5);
        assertThat(Sharding.of(total(Sharding.put(data(7, 5), rows)))).as("a replicated result is plain").isNull();
        Sharding cols = Sharding.of(mesh, null, "x");
        assertThat(Sharding.of(constrained(Sharding.put(data(7, 5), rows), cols))).isEqualTo(cols);
    }

    @Ranks({4})
    void twoDimensionalMesh(Comm world) {
        Mesh mesh = Mesh.of(world, new int[] {2, 2}, "x", "y");
        Tensor a = data(5, 7), b = data(7, 3).mul(0.5);
        List<Sharding> shardings = new ArrayList<>();
        for (String[] axes : List.of(new String[] {"x", "y"}, new String[] {"y", "x"}, new String[] {"x", null},
                new String[] {null, "y"})) {
            shardings.add(Sharding.of(mesh, axes));
        }
        for (Sharding s : shardings) {
            Tensor as = Sharding.put(a, s);
            assertThat(Sharding.gather(as)).isEqualTo(a);
            assertThat(Sharding.gather(elementwise(as, Sharding.put(a, shardings.getFirst()))))
                    .isCloseTo(elementwise(a, a), 1e-12);
            assertThat(Sharding.gather(sumRows(as))).isCloseTo(sumRows(a), 1e-12);
            assertThat(total(as)).isCloseTo(total(a), 1e-12);
            assertThat(Sharding.gather(matmul(as, Sharding.put(b, Sharding.of(mesh, "y", null)))))
                    .isCloseTo(matmul(a, b), 1e-12);
            assertThat(Sharding.gather(constrained(as, shardings.get(1)))).isCloseTo(
                    Sharding.gather(constrained(a, shardings.get(1))), 1e-12);
        }
    }
}
