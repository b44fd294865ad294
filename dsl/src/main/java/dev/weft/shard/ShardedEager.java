package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs an eager operation on sharded tensors (outside any trace): the one operation, as a program of one node on
 * the global avals, partitioned over the operands' mesh and run at once on this rank's blocks, with the
 * communication its {@link ShardingRules} entry inserts. So {@code t.add(1)} on a row-sharded {@code t} adds on the
 * blocks, and {@code t.sum()} sums the blocks and allreduces. Like any collective, an operation on a sharded tensor
 * must be made by every rank of its mesh.
 */
final class ShardedEager implements Interpreter {
    static final ShardedEager INSTANCE = new ShardedEager();

    private ShardedEager() {
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        SourceLocation at = where != null ? where : SourceLocation.capture();
        List<Var> inputs = new ArrayList<>(args.size());
        List<Tensor> locals = new ArrayList<>(args.size());
        List<Sharding> in = new ArrayList<>(args.size());
        for (Tensor t : args) {
            ShardedValue v = Sharding.shardedValue(t);
            inputs.add(new Var(inputs.size(), TensorAccess.aval(t)));
            locals.add(v == null ? t : v.local());
            in.add(v == null ? null : v.sharding());
        }
        List<Var> outputs = new ArrayList<>(outAvals.size());
        for (Aval a : outAvals) {
            outputs.add(new Var(inputs.size() + outputs.size(), a));
        }
        Region program = new Region(inputs, List.of(new Node(prim, params, inputs, outputs, at)), outputs);
        Partitioner.Result r = Partitioner.partition(program, locals, in);
        List<Tensor> out = new ArrayList<>(outAvals.size());
        for (int k = 0; k < outAvals.size(); k++) {
            out.add(Partitioner.result(r.locals().get(k), r.shardings().get(k), outAvals.get(k)));
        }
        return out;
    }
}
