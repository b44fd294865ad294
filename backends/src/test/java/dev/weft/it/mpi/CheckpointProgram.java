package dev.weft.it.mpi;

import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.io.Checkpoint;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Run by {@link MpiCheckpointTest} under {@code mpirun}: saves a row-sharded table and a replicated vector to the
 * directory named by its argument; prints {@code rank R: saved}.
 */
public final class CheckpointProgram {
    private CheckpointProgram() {
    }

    /** The table every run saves and loads: 10 × 3 values. */
    static Tensor table() {
        double[] v = new double[30];
        Arrays.setAll(v, i -> Math.sin(i) * 10);
        return Tensor.of(v, 10, 3);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        Sharding rows = Sharding.of(Mesh.of(world, "x"), "x", null);
        Checkpoint.save(Path.of(args[0]), List.of(Sharding.put(table(), rows), Tensor.of(new float[] {7, -1})),
                world);
        System.out.println("rank " + world.rank() + ": saved");
    }
}
