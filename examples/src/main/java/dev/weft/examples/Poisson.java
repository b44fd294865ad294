package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.CartComm;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * The 2-D Poisson equation {@code -Δu = f} on the unit square with zero (Dirichlet) boundaries, discretised with the
 * five-point stencil and solved by conjugate gradients. The grid is split into blocks over a 2-D Cartesian
 * communicator ({@link Comm#cart}, shape from {@link Comm#dimsCreate}); each matrix-vector product exchanges its
 * block's four edges with {@link CartComm#neighborAlltoall} (zeros arrive from {@link Comm#PROC_NULL} past the
 * boundary), and the dot products are allreduces. The whole solve, a {@link Weft#whileLoop} until the residual is
 * small, is one compiled program. Its result is compared with the same program run on one rank over the whole grid.
 */
public final class Poisson {
    private static final int N = 48;
    private static final double TOLERANCE = 1e-10;
    private static final int MAX_ITERATIONS = 1000;

    private Poisson() {
    }

    /** The conjugate-gradient state: iterate, residual, direction, the residual's squared norm, iterations. */
    public record State(Tensor x, Tensor r, Tensor p, Tensor rr, Tensor k) {
    }

    /** Solves {@code A x = b} for this rank's block {@code b}; returns the block of {@code x} and the iterations. */
    @Compile
    public static State solve(CartComm grid, Tensor b) {
        Tensor rr = dot(grid, b, b);
        Tensor stop = rr.mul(TOLERANCE * TOLERANCE);
        State start = new State(Tensor.zeros(DType.F64, b.shape()), b, b, rr, Tensor.scalar(DType.I32, 0));
        return Weft.whileLoop(
                // go on while the residual is large, for at most MAX_ITERATIONS (k < 0: false, as a tensor)
                s -> Tensor.where(s.k().lt(MAX_ITERATIONS), s.rr().gt(stop), s.k().lt(0)),
                s -> {
                    Tensor ap = apply(grid, s.p());
                    Tensor alpha = s.rr().div(dot(grid, s.p(), ap));
                    Tensor x = s.x().add(s.p().mul(alpha));
                    Tensor r = s.r().sub(ap.mul(alpha));
                    Tensor rr2 = dot(grid, r, r);
                    Tensor p = r.add(s.p().mul(rr2.div(s.rr())));
                    return new State(x, r, p, rr2, s.k().add(1));
                },
                start);
    }

    private static Tensor dot(Comm grid, Tensor a, Tensor b) {
        return grid.allreduce(a.mul(b).sum(), ReduceOp.SUM);
    }

    /**
     * The five-point negative Laplacian of this rank's block {@code u} (scaled by {@code h²}): {@code 4u} less its four
     * neighbours, those past the block's edges taken from the neighbouring ranks' edges.
     */
    static Tensor apply(CartComm grid, Tensor u) {
        long n = u.shape()[0], m = u.shape()[1], width = Math.max(n, m);
        // MPI's neighbour order: the low then the high edge of dimension 0 (rows), then of dimension 1 (columns);
        // the edges are padded to one length to travel as one tensor
        Tensor edges = Tensor.concat(0, edge(u.slice(0, 0, 1), width), edge(u.slice(0, n - 1, n), width),
                edge(u.slice(1, 0, 1), width), edge(u.slice(1, m - 1, m), width));
        Tensor halo = grid.neighborAlltoall(edges);
        Tensor above = halo.slice(0, 0, 1).slice(1, 0, m);
        Tensor below = halo.slice(0, 1, 2).slice(1, 0, m);
        Tensor left = halo.slice(0, 2, 3).slice(1, 0, n).reshape(n, 1);
        Tensor right = halo.slice(0, 3, 4).slice(1, 0, n).reshape(n, 1);
        Tensor up = Tensor.concat(0, above, u.slice(0, 0, n - 1));
        Tensor down = Tensor.concat(0, u.slice(0, 1, n), below);
        Tensor west = Tensor.concat(1, left, u.slice(1, 0, m - 1));
        Tensor east = Tensor.concat(1, u.slice(1, 1, m), right);
        return u.mul(4).sub(up).sub(down).sub(west).sub(east);
    }

    /** A row or column of the block as a {@code [1, width]} row, zero-padded. */
    private static Tensor edge(Tensor line, long width) {
        Tensor row = line.reshape(1, line.shape()[0] * line.shape()[1]);
        return row.pad(new long[] {0, 0}, new long[] {0, width - row.shape()[1]});
    }

    /** The right-hand side {@code h² f} on rows {@code [r0, r0 + rows)} and columns {@code [c0, c0 + cols)}. */
    static Tensor rhs(long r0, long rows, long c0, long cols) {
        double h = 1.0 / (N + 1);
        double[] a = new double[(int) (rows * cols)];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                double y = (r0 + i + 1) * h, x = (c0 + j + 1) * h;
                a[(int) (i * cols + j)] = h * h * (1 + 50 * Math.exp(-60 * ((x - 0.35) * (x - 0.35)
                        + (y - 0.6) * (y - 0.6))));
            }
        }
        return Tensor.of(a, rows, cols);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int size = world.size();
        int[] dims = Comm.dimsCreate(size, 2);
        if (N % dims[0] != 0 || N % dims[1] != 0) {
            throw new IllegalArgumentException(N + "x" + N + " grid does not split over " + dims[0] + "x" + dims[1]
                    + " ranks");
        }
        CartComm grid = world.cart(dims, new boolean[] {false, false});
        int[] at = grid.coords();
        long rows = N / dims[0], cols = N / dims[1];
        State mine = solve(grid, rhs(at[0] * rows, rows, at[1] * cols, cols));

        // every rank's block, placed on the whole grid by its coordinates
        Tensor blocks = world.allgather(mine.x()).reshape(size, rows, cols);
        Tensor[] gridRows = new Tensor[dims[0]];
        for (int i = 0; i < dims[0]; i++) {
            Tensor[] row = new Tensor[dims[1]];
            for (int j = 0; j < dims[1]; j++) {
                int q = grid.rankOf(i, j);
                row[j] = blocks.slice(0, q, q + 1).reshape(rows, cols);
            }
            gridRows[i] = Tensor.concat(1, row);
        }
        Tensor whole = Tensor.concat(0, gridRows);

        Comm alone = world.split(world.rank(), 0);
        State reference = solve(alone.cart(new int[] {1, 1}, new boolean[] {false, false}), rhs(0, N, 0, N));
        double maxError = whole.sub(reference.x()).abs().max().item() / reference.x().abs().max().item();
        // the residual of the gathered solution against the one-rank operator: the solve itself is checked too
        Tensor residual = rhs(0, N, 0, N).sub(apply(alone.cart(new int[] {1, 1}, new boolean[] {false, false}),
                whole));
        double relativeResidual = Math.sqrt(residual.mul(residual).sum().item()) / Math.sqrt(rhs(0, N, 0, N)
                .mul(rhs(0, N, 0, N)).sum().item());
        if (world.rank() == 0) {
            System.out.printf("poisson iterations = %d max_error = %.3e%n", (long) mine.k().item(), maxError);
        }
        if (!(maxError < 1e-8) || !(relativeResidual < 1e-9) || mine.k().item() >= MAX_ITERATIONS) {
            throw new IllegalStateException("rank " + world.rank() + ": distributed Poisson solve differs from one"
                    + " rank by " + maxError + " (relative residual " + relativeResidual + ", " + mine.k().item()
                    + " iterations)");
        }
    }
}
