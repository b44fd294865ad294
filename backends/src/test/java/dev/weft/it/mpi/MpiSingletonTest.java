package dev.weft.it.mpi;

import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.mpi.MpiWorldProvider;
import dev.weft.comm.Comm;
import dev.weft.spi.CommBinding;
import dev.weft.spi.CommHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Without {@code mpirun} a process gets a one-rank world, without loading MPI, and programs run on it. */
class MpiSingletonTest {
    @Test
    void aPlainJvmHasAOneRankWorld() {
        assertThat(MpiWorldProvider.launchedByMpirun()).isFalse();
        CommHandle world = new MpiWorldProvider().world();
        assertThat(world.rank()).isZero();
        assertThat(world.size()).isOne();
        assertThat(world.name()).isEqualTo("world");
    }

    @Test
    void theParityProgramsRunInAPlainJvm(@TempDir Path dir) throws Exception {
        Mpirun.Result r = Mpirun.plain(Duration.ofSeconds(60), ParityPrograms.class, dir.toString());
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        Weft.install();
        List<String> fake = new ArrayList<>();
        FakeWorld.run(1, world -> CommBinding.with(world, () -> fake.addAll(ParityPrograms.run(Comm.world()))));
        assertThat(Files.readAllLines(dir.resolve("rank-0.txt"))).containsExactlyElementsOf(fake);
    }
}
