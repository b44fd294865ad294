package dev.weft.it.mpi;

import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.it.shard.ShardingChecks;

/**
 * Run by {@link MpiShardTest} under {@code mpirun}: the sharding checks; prints {@code rank R: N sharding checks ok}.
 */
public final class ShardProgram {
    private ShardProgram() {
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        System.out.println("rank " + world.rank() + ": " + ShardingChecks.run(world) + " sharding checks ok");
    }
}
