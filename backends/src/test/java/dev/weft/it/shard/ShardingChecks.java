package dev.weft.it.shard;

import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import java.util.List;

/** Global programs of {@link ShardingTest} on sharded tensors against whole arrays, for a run under {@code mpirun}. */
public final class ShardingChecks {
    private ShardingChecks() {
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
