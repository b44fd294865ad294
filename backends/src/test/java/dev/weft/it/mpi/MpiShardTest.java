package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.it.shard.ShardingChecks;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Global programs on sharded tensors under {@code mpirun -np 2} and {@code -np 4}, of Open MPI and of MPICH, equal
 * them on whole arrays ({@link ShardProgram}).
 */
class MpiShardTest {
    static Stream<Object[]> flavorsAndRanks() {
        return Stream.of(Mpirun.Flavor.values()).flatMap(f -> Stream.of(2, 4).map(n -> new Object[] {f, n}));
    }

    @ParameterizedTest(name = "{0}, {1} ranks")
    @MethodSource("flavorsAndRanks")
    void shardedProgramsMatchWholeArraysUnderMpirun(Mpirun.Flavor flavor, int n) throws Exception {
        MpiParityTest.requireLauncher(flavor);
        Mpirun.Result r = Mpirun.run(flavor, n, Duration.ofSeconds(120), Map.of(), ShardProgram.class);
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        for (int rank = 0; rank < n; rank++) {
            assertThat(r.output()).contains("rank " + rank + ": " + ShardingChecks.count(n) + " sharding checks ok");
        }
    }
}
