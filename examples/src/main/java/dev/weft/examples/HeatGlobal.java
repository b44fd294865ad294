package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;

/**
 * {@link Heat} written on the global grid: the same explicit 2-D heat diffusion with zero boundaries, with the grid's
 * rows split over the ranks by a {@link Sharding} and no communication in the program. Weft partitions the padded
 * and shifted grids into halo exchanges with the neighbouring ranks, inside the {@code Weft.fori} loop. Any number of
 * ranks works (48 rows over 5 ranks are blocks of 10, 10, 10, 10 and 8). The gathered result is compared with
 * {@link Heat#simulate} on one rank over the whole grid.
 */
public final class HeatGlobal {
    private static final int ROWS = 48;
    private static final int COLS = 32;
    private static final int STEPS = 50;
    private static final double ALPHA = 0.1;
    private static final double TOLERANCE = 1e-12;

    private HeatGlobal() {
    }

    /** {@code steps} diffusion steps of the whole grid {@code u}, however it is sharded. */
    @Compile
    public static Tensor simulate(Tensor u, int steps, double alpha) {
        return Weft.fori(0, steps, u, (i, g) -> step(g, alpha));
    }

    private static Tensor step(Tensor u, double alpha) {
        long n = u.shape()[0], m = u.shape()[1];
        Tensor p = u.pad(new long[] {1, 1}, new long[] {1, 1});
        Tensor up = p.slice(new long[] {0, 1}, new long[] {n, m + 1});
        Tensor down = p.slice(new long[] {2, 1}, new long[] {n + 2, m + 1});
        Tensor left = p.slice(new long[] {1, 0}, new long[] {n + 1, m});
        Tensor right = p.slice(new long[] {1, 2}, new long[] {n + 1, m + 2});
        return u.add(up.add(down).add(left).add(right).sub(u.mul(4)).mul(alpha));
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        Sharding rows = Sharding.of(Mesh.of(world, "rows"), "rows", null);
        Tensor grid = Heat.initial(0, ROWS);
        Tensor result = Sharding.gather(simulate(Sharding.put(grid, rows), STEPS, ALPHA));
        Tensor alone = Heat.simulate(world.split(world.rank(), 0), grid, STEPS, ALPHA);
        double maxError = result.sub(alone).abs().max().item();
        if (world.rank() == 0) {
            System.out.printf("heat_global max_error = %.3e%n", maxError);
        }
        if (!(maxError < TOLERANCE)) {
            throw new IllegalStateException("rank " + world.rank() + ": the global heat program differs from one"
                    + " rank by " + maxError);
        }
    }
}
