package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.shard.Partitioner;
import dev.weft.shard.Sharding;
import dev.weft.spi.Aval;
import java.util.ArrayList;
import java.util.List;

/**
 * A partitioned program's executable seen from the caller: it takes the arguments' local blocks and gives each
 * result as a tensor of its global aval laid out by its sharding (plain where replicated).
 */
record PartitionedExecutable(Executable local, List<Sharding> shardings, List<Aval> globals) implements Executable {
    @Override
    public List<Tensor> run(List<Tensor> args) {
        List<Tensor> out = local.run(args);
        List<Tensor> results = new ArrayList<>(out.size());
        for (int k = 0; k < out.size(); k++) {
            results.add(Partitioner.result(out.get(k), shardings.get(k), globals.get(k)));
        }
        return results;
    }

    @Override
    public void close() {
        local.close();
    }
}
