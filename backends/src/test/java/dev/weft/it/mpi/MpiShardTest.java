package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Global programs on sharded tensors under {@code mpirun -np 2} equal them on whole arrays ({@link ShardProgram}). */
class MpiShardTest {
    @Test
    void shardedProgramsMatchWholeArraysUnderMpirun() throws Exception {
        MpiParityTest.requireLauncher(Mpirun.Flavor.OPEN_MPI);
        Mpirun.Result r = Mpirun.run(2, Duration.ofSeconds(120), ShardProgram.class);
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("rank 0: 19 sharding checks ok", "rank 1: 19 sharding checks ok");
    }
}
