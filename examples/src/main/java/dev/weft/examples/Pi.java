package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/** π as the midpoint rule for ∫₀¹ 4/(1+x²) dx, intervals split over ranks, partial sums combined by allreduce. */
public final class Pi {
    private static final int INTERVALS = 1 << 20;
    private static final double TOLERANCE = 1e-9;

    private Pi() {
    }

    /** This rank's share of the sum, reduced over all ranks. {@code n} must divide by the number of ranks. */
    @Compile
    static Tensor pi(Comm comm, int n) {
        long perRank = n / comm.size();
        Tensor i = Tensor.arange(DType.F64, perRank).add((double) comm.rank() * perRank);
        Tensor x = i.add(0.5).div(n);
        Tensor local = x.mul(x).add(1).pow(-1).mul(4).sum().div(n);
        return comm.allreduce(local, ReduceOp.SUM);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int n = INTERVALS - INTERVALS % world.size();
        double pi = pi(world, n).item();
        double error = Math.abs(pi - Math.PI);
        if (world.rank() == 0) {
            System.out.printf("pi = %.15f error = %.3e%n", pi, error);
        }
        if (!(error < TOLERANCE)) {
            throw new IllegalStateException("pi is off by " + error + " on rank " + world.rank());
        }
    }
}
