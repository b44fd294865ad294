package dev.weft.it.shard;

import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import java.util.List;

/**
 * Global programs of {@link ShardingTest} on sharded tensors against whole arrays, for a run under {@code mpirun}:
 * on two layouts, a branch, a reshape, an eager operation, a loop, a gradient, and on four ranks a 2-D mesh.
 */
public final class ShardingChecks {
    private ShardingChecks() {
    }

    /** How many checks {@link #run} makes on {@code ranks} ranks. */
    public static int count(int ranks) {
        return 24 + (ranks == 4 ? 2 : 0);
    }

    /**
     * Runs every check on {@code world}'s ranks (collective); returns how many passed.
     *
     * @throws IllegalStateException naming the first check whose result differs from the whole-array program
     */
    public static int run(Comm world) {
        Mesh mesh = Mesh.of(world, "x");
        Sharding rows = Sharding.of(mesh, "x", null), cols = Sharding.of(mesh, null, "x");
        Tensor x = ShardingTest.data(7, 5), w = ShardingTest.data(5, 6).mul(0.2), bias = ShardingTest.data(6);
        int ok = 0;
        for (Sharding s : List.of(rows, cols)) {
            Tensor xs = Sharding.put(x, s);
            ok += check(s + " put/gather", Sharding.gather(xs), x);
            ok += check(s + " elementwise", Sharding.gather(ShardingTest.elementwise(xs, xs)),
                    ShardingTest.elementwise(x, x));
            ok += check(s + " sum", Sharding.gather(ShardingTest.sumRows(xs)), ShardingTest.sumRows(x));
            ok += check(s + " total", ShardingTest.total(xs), ShardingTest.total(x));
            ok += check(s + " matmul", Sharding.gather(ShardingTest.matmul(xs, Sharding.put(w, rows))),
                    ShardingTest.matmul(x, w));
            ok += check(s + " layers", Sharding.gather(ShardingTest.layers(xs, w, bias)),
                    ShardingTest.layers(x, w, bias));
            ok += check(s + " stencil", Sharding.gather(ShardingTest.stencil(xs)), ShardingTest.stencil(x));
            ok += check(s + " stencil loop", Sharding.gather(ShardingTest.smooth(xs, 4)), ShardingTest.smooth(x, 4));
            ok += check(s + " constrain", Sharding.gather(ShardingTest.constrained(xs, rows.equals(s) ? cols : rows)),
                    Sharding.gather(ShardingTest.constrained(x, rows)));
        }
        Tensor product = ShardingTest.splitProduct(Sharding.put(x, cols), Sharding.put(w, rows), rows);
        ok += check("reduce-scatter", Sharding.gather(product), x.matmul(w).exp());
        Tensor u = ShardingTest.data(8, 6), y = ShardingTest.data(8, 6).mul(-0.5), us = Sharding.put(u, rows);
        ok += check("cond", Sharding.gather(ShardingTest.branches(us, Sharding.put(y, rows))),
                ShardingTest.branches(u, y));
        ok += check("reshape", Sharding.gather(ShardingTest.reshaped(us)), ShardingTest.reshaped(u));
        ok += check("eager", Sharding.gather(us.mul(2).add(u.exp()).sum(1)), u.mul(2).add(u.exp()).sum(1));
        ok += check("loop", Sharding.gather(ShardingTest.diffuse(us, 5)), ShardingTest.diffuse(u, 5));
        Tensor v = ShardingTest.data(5, 2).mul(0.3);
        ok += check("grad", Sharding.gather(ShardingTest.gradient(us.slice(new long[] {0, 0}, new long[] {8, 5}), v)),
                ShardingTest.gradient(u.slice(new long[] {0, 0}, new long[] {8, 5}), v));
        if (world.size() == 4) {
            Mesh grid = Mesh.of(world, new int[] {2, 2}, "x", "y");
            Tensor g = ShardingTest.data(11, 9);
            for (Sharding s : List.of(Sharding.of(grid, "x", "y"), Sharding.of(grid, "y", "x"))) {
                ok += check(s + " heat", Sharding.gather(ShardingTest.heat(Sharding.put(g, s), 4)),
                        ShardingTest.heat(g, 4));
            }
        }
        return ok;
    }

    private static int check(String what, Tensor actual, Tensor expected) {
        double[] a = actual.toDoubleArray(), e = expected.toDoubleArray();
        for (int i = 0; i < e.length; i++) {
            if (a.length != e.length || Math.abs(a[i] - e[i]) > 1e-12 * (1 + Math.abs(e[i]))) {
                throw new IllegalStateException(what + ": " + actual + " differs from " + expected);
            }
        }
        return 1;
    }
}
