package com.example;

import static dev.weft.testing.TensorAssert.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.testing.Ranks;
import java.util.Arrays;

/** The program on 1 and 3 fake ranks in this JVM, against the plain-Java reference. */
class StandardizeTest {
    private static final int PER_RANK = 1000;

    @Ranks({1, 3})
    void eachRankGetsItsBlockOfTheStandardizedVector(Comm world) {
        Tensor z = Standardize.standardize(Standardize.block(world.rank(), PER_RANK), world);
        double[] all = Standardize.reference((long) PER_RANK * world.size());
        double[] mine = Arrays.copyOfRange(all, world.rank() * PER_RANK, (world.rank() + 1) * PER_RANK);
        assertThat(z).hasDType(DType.F64).hasShape(PER_RANK).isCloseTo(Tensor.of(mine), 1e-12);
    }

    @Ranks({2})
    void theGatheredResultHasMeanZeroAndVarianceOne(Comm world) {
        Tensor z = world.allgather(Standardize.standardize(Standardize.block(world.rank(), PER_RANK), world));
        assertThat(z.mean()).isCloseTo(Tensor.of(new double[] {0}).reshape(), 1e-12);
        assertThat(z.mul(z).mean()).isCloseTo(Tensor.of(new double[] {1}).reshape(), 1e-12);
    }

    @Ranks({2})
    void theCompiledProgramHasTwoAllreducesOnTheWorld(Comm world) {
        String mlir = Weft.lower(Standardize.class, "standardize", TensorSpec.of(DType.F64, PER_RANK), world)
                .toMlir();
        org.assertj.core.api.Assertions.assertThat(mlir.split("call_target_name = \"weft.mpi.allreduce\"", -1))
                .hasSize(3);
    }
}
