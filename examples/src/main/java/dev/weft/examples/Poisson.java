package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.CartComm;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;

/**
 * The 2-D Poisson equation {@code -Δu = f} on the unit square with zero (Dirichlet) boundaries, discretised with the
 * five-point stencil and solved by conjugate gradients. The grid is split into blocks over a 2-D Cartesian
 * communicator ({@link Comm#cart}, shape from {@link Comm#dimsCreate}); each matrix-vector product exchanges its
 * block's four edges with {@link CartComm#neighborAlltoall} (zeros arrive from {@link Comm#PROC_NULL} past the
 * boundary), and each iteration's two dot products are one nonblocking allreduce ({@link Comm#iallreduce}) that
 * travels while the next matrix-vector product runs (pipelined CG). The whole solve, a {@link Weft#whileLoop} until
 * the residual is small, is one compiled program. Its result is compared with the same program run on one rank over the whole grid.
 */
public final class Poisson {
    private static final int N = 48;
    private static final double TOLERANCE = 1e-10;
    private static final int MAX_ITERATIONS = 1000;

    private Poisson() {
    }

    /**
     * The pipelined conjugate-gradient state (Ghysels and Vanroose's recurrences): iterate {@code x}, residual
     * {@code r}, {@code w = A r}, {@code z = A s}, {@code s = A p}, direction {@code p}, the last residual norm
     * squared {@code rr} and step {@code alpha}, iterations {@code k}.
     */
    public record State(Tensor x, Tensor r, Tensor w, Tensor z, Tensor s, Tensor p, Tensor rr, Tensor alpha,
            Tensor k) {
    }

    /**
     * Solves {@code A x = b} for this rank's block {@code b}; returns the block of {@code x} and the iterations.
     * Pipelined CG: each iteration starts one nonblocking allreduce of its two dot products ({@code r·r} and
     * {@code w·r}) and waits for it only after the matrix-vector product {@code A w}, which does not need them; so
     * the reduction travels while the product and its halo exchange run. It takes one matrix-vector product and one
     * reduction per iteration, as CG does, at one more vector update; it stops one iteration after the residual
     * is small, since it learns a residual's norm an iteration late.
     */
    @Compile
    public static State solve(CartComm grid, Tensor b) {
        Tensor rr = grid.allreduce(b.mul(b).sum(), ReduceOp.SUM);
        Tensor stop = rr.mul(TOLERANCE * TOLERANCE);
        Tensor zero = Tensor.zeros(DType.F64, b.shape());
        State start = new State(zero, b, apply(grid, b), zero, zero, zero, rr, Tensor.scalar(DType.F64, 1),
                Tensor.scalar(DType.I32, 0));
        return Weft.whileLoop(
                // go on while the residual is large, for at most MAX_ITERATIONS (k < 0: false, as a tensor)
                s -> Tensor.where(s.k().lt(MAX_ITERATIONS), s.rr().gt(stop), s.k().lt(0)),
                s -> {
                    Request dots = grid.iallreduce(Tensor.concat(0, s.r().mul(s.r()).sum().reshape(1),
                            s.w().mul(s.r()).sum().reshape(1)), ReduceOp.SUM);
                    Tensor q = apply(grid, s.w());
                    Tensor both = grid.wait(dots);
                    Tensor gamma = both.slice(0, 0, 1).reshape();
                    Tensor delta = both.slice(0, 1, 2).reshape();
                    // the first iteration has no earlier direction: beta = 0, and alpha is CG's gamma / delta
                    Tensor beta = Tensor.where(s.k().gt(0), gamma.div(s.rr()), 0);
                    Tensor alpha = gamma.div(delta.sub(beta.mul(gamma).div(s.alpha())));
                    Tensor z = q.add(s.z().mul(beta));
                    Tensor sv = s.w().add(s.s().mul(beta));
                    Tensor p = s.r().add(s.p().mul(beta));
                    return new State(s.x().add(p.mul(alpha)), s.r().sub(sv.mul(alpha)), s.w().sub(z.mul(alpha)), z,
                            sv, p, gamma, alpha, s.k().add(1));
                },
                start);
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
