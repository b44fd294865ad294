package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.io.Checkpoint;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import dev.weft.testing.RankRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A checkpoint saved on 2 MPI ranks ({@link CheckpointProgram}) loads on 1 and 3 fake ranks, resharded. */
class MpiCheckpointTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void savedUnderMpirunLoadsOnOtherRankCounts(Mpirun.Flavor flavor, @TempDir Path dir) throws Exception {
        MpiParityTest.requireLauncher(flavor);
        Path ckpt = dir.resolve("ckpt");
        Mpirun.Result r = Mpirun.run(flavor, 2, TIMEOUT, Map.of(), CheckpointProgram.class, ckpt.toString());
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("rank 0: saved", "rank 1: saved");
        for (int n : new int[] {1, 3}) {
            RankRunner.run(n, c -> {
                Sharding rows = Sharding.of(Mesh.of(c, "x"), "x", null);
                List<Tensor> template = List.of(Sharding.put(Tensor.zeros(DType.F64, 10, 3), rows),
                        Tensor.zeros(DType.F32, 2));
                List<Tensor> back = Checkpoint.load(ckpt, template, c);
                assertThat(Sharding.gather(back.get(0)).toDoubleArray())
                        .containsExactly(CheckpointProgram.table().toDoubleArray());
                assertThat(back.get(1).toFloatArray()).containsExactly(7, -1);
            });
        }
    }
}
