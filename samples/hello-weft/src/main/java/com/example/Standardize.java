package com.example;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * Standardizes a vector split over the ranks, {@code (x - mean) / std} with the global mean and standard
 * deviation, and checks every element against a plain-Java computation over the whole vector.
 * Run: {@code mpirun -np 2 java ... com.example.Standardize [elements per rank]}.
 */
public final class Standardize {
    private Standardize() {
    }

    /** This rank's block of the standardized vector; {@code x} is this rank's block of the input. */
    @Compile
    public static Tensor standardize(Tensor x, Comm comm) {
        double n = (double) x.size() * comm.size();
        Tensor mean = comm.allreduce(x.sum(), ReduceOp.SUM).div(n);
        Tensor centred = x.sub(mean);
        Tensor variance = comm.allreduce(centred.mul(centred).sum(), ReduceOp.SUM).div(n);
        return centred.mul(variance.rsqrt());
    }

    /** Element {@code i} of the input vector, the same on every rank. */
    public static double input(long i) {
        return 3 * Math.sin(0.001 * i) + 1;
    }

    /** Rank {@code rank}'s block of {@code perRank} input elements. */
    public static Tensor block(int rank, int perRank) {
        double[] x = new double[perRank];
        for (int k = 0; k < perRank; k++) {
            x[k] = input((long) rank * perRank + k);
        }
        return Tensor.of(x);
    }

    /** The standardized vector of {@code n} elements, computed in plain Java: the reference. */
    public static double[] reference(long n) {
        double sum = 0;
        for (long i = 0; i < n; i++) {
            sum += input(i);
        }
        double mean = sum / n;
        double squares = 0;
        for (long i = 0; i < n; i++) {
            squares += (input(i) - mean) * (input(i) - mean);
        }
        double std = Math.sqrt(squares / n);
        double[] z = new double[(int) n];
        for (int i = 0; i < n; i++) {
            z[i] = (input(i) - mean) / std;
        }
        return z;
    }

    public static void main(String[] args) {
        Comm world = Comm.world();
        int perRank = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        double[] mine = standardize(block(world.rank(), perRank), world).toDoubleArray();
        double[] expected = reference((long) perRank * world.size());
        double error = 0;
        for (int k = 0; k < perRank; k++) {
            error = Math.max(error, Math.abs(mine[k] - expected[world.rank() * perRank + k]));
        }
        double worst = world.allreduce(Tensor.of(new double[] {error}), ReduceOp.MAX).item();
        if (world.rank() == 0) {
            System.out.printf("standardized %d values on %d ranks, max_error = %.2e%n", perRank * world.size(),
                    world.size(), worst);
        }
        if (!(worst < 1e-9)) {
            System.exit(1);
        }
    }
}
