package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.Request;

/**
 * Explicit 2-D heat diffusion with zero (Dirichlet) boundaries. Rows are split over ranks; each step exchanges
 * one halo row with each neighbour inside a {@code Weft.fori} loop ({@code irecv}s, then {@code isend}s, then
 * every {@code wait}). The gathered result is compared with the same program run on one rank over the whole grid.
 */
public final class Heat {
    private static final int ROWS = 48;
    private static final int COLS = 32;
    private static final int STEPS = 50;
    private static final double ALPHA = 0.1;
    private static final double TOLERANCE = 1e-12;
    /** The tags of a halo row sent to the rank above (rank - 1) and to the rank below (rank + 1). */
    private static final int UP = 0, DOWN = 1;

    private Heat() {
    }

    /** {@code steps} diffusion steps of this rank's rows. */
    @Compile
    public static Tensor simulate(Comm comm, Tensor rows, int steps, double alpha) {
        return Weft.fori(0, steps, rows, (i, u) -> step(comm, u, alpha));
    }

    private static Tensor step(Comm comm, Tensor u, double alpha) {
        long n = u.shape()[0], m = u.shape()[1];
        int r = comm.rank(), size = comm.size();
        long[] row = {1, m};
        // Both receives start before either send and the four requests complete together, as an MPI halo exchange
        // does: no send relies on being buffered, and no rank waits for its neighbour's other exchange first.
        Request fromAbove = r > 0 ? comm.irecv(DType.F64, row, r - 1, DOWN) : null;
        Request fromBelow = r < size - 1 ? comm.irecv(DType.F64, row, r + 1, UP) : null;
        Request toAbove = r > 0 ? comm.isend(u.slice(new long[] {0, 0}, row), r - 1, UP) : null;
        Request toBelow = r < size - 1 ? comm.isend(u.slice(new long[] {n - 1, 0}, new long[] {n, m}), r + 1, DOWN)
                : null;
        Tensor above = fromAbove != null ? comm.wait(fromAbove) : Tensor.zeros(DType.F64, 1, m);
        Tensor below = fromBelow != null ? comm.wait(fromBelow) : Tensor.zeros(DType.F64, 1, m);
        if (toAbove != null) {
            comm.wait(toAbove);
        }
        if (toBelow != null) {
            comm.wait(toBelow);
        }
        Tensor p = Tensor.concat(0, above, u, below).pad(new long[] {0, 1}, new long[] {0, 1});
        Tensor up = p.slice(new long[] {0, 1}, new long[] {n, m + 1});
        Tensor down = p.slice(new long[] {2, 1}, new long[] {n + 2, m + 1});
        Tensor left = p.slice(new long[] {1, 0}, new long[] {n + 1, m});
        Tensor right = p.slice(new long[] {1, 2}, new long[] {n + 1, m + 2});
        return u.add(up.add(down).add(left).add(right).sub(u.mul(4)).mul(alpha));
    }

    static Tensor initial(long firstRow, long rows) {
        double[] a = new double[(int) (rows * COLS)];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < COLS; j++) {
                double y = (firstRow + i + 0.5) / ROWS, x = (j + 0.5) / COLS;
                a[i * COLS + j] = Math.exp(-40 * ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)));
            }
        }
        return Tensor.of(a, rows, COLS);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int r = world.rank(), size = world.size();
        if (ROWS % size != 0) {
            throw new IllegalArgumentException(ROWS + " rows do not split over " + size + " ranks");
        }
        long mine = ROWS / size;
        Tensor local = simulate(world, initial(r * mine, mine), STEPS, ALPHA);
        Tensor gathered = world.allgather(local);
        Tensor alone = simulate(world.split(r, 0), initial(0, ROWS), STEPS, ALPHA);
        double maxError = gathered.sub(alone).abs().max().item();
        if (r == 0) {
            System.out.printf("heat max_error = %.3e%n", maxError);
        }
        if (!(maxError < TOLERANCE)) {
            throw new IllegalStateException("rank " + r + ": distributed heat differs from one rank by " + maxError);
        }
    }
}
