package dev.weft.tracer;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Var;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in backend for tests: its executables evaluate the graph's f32 {@code constant}, {@code add},
 * {@code sub}, {@code mul} and scalar {@code broadcast_in_dim} nodes directly. It records every graph it compiles.
 */
public final class GraphEvaluatingPipeline implements CompilePipeline {
    /** Every graph compiled so far, in order. */
    public static final List<Graph> COMPILED = new CopyOnWriteArrayList<>();

    @Override
    public String defaultTarget() {
        return "graph";
    }

    @Override
    public Executable compile(Graph graph, String target) {
        COMPILED.add(graph);
        return args -> run(graph, args);
    }

    private static List<Tensor> run(Graph graph, List<Tensor> args) {
        Map<Var, MemorySegment> env = new IdentityHashMap<>();
        List<Var> params = graph.body().params();
        for (int i = 0; i < params.size(); i++) {
            env.put(params.get(i), TensorAccess.data(args.get(i)));
        }
        for (Node n : graph.body().nodes()) {
            Var out = n.outputs().getFirst();
            long size = out.aval().shape().size();
            MemorySegment r = Arena.ofAuto().allocate(Math.max(1, out.aval().byteSize()));
            if (n.prim() == Prims.CONSTANT) {
                r.copyFrom(TensorAccess.data(((ConstantParams) n.params()).value()));
            } else if (n.prim() == Prims.BROADCAST_IN_DIM) {
                float v = env.get(n.inputs().getFirst()).getAtIndex(ValueLayout.JAVA_FLOAT, 0);
                for (long i = 0; i < size; i++) {
                    r.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                }
            } else {
                MemorySegment a = env.get(n.inputs().get(0)), b = env.get(n.inputs().get(1));
                for (long i = 0; i < size; i++) {
                    float x = a.getAtIndex(ValueLayout.JAVA_FLOAT, i), y = b.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    r.setAtIndex(ValueLayout.JAVA_FLOAT, i, apply(n, x, y));
                }
            }
            env.put(out, r);
        }
        List<Tensor> results = new ArrayList<>();
        for (Var v : graph.body().results()) {
            if (v.aval().dtype() != DType.F32) {
                throw new UnsupportedOperationException("test pipeline evaluates f32 only");
            }
            results.add(TensorAccess.concrete(new Aval(DType.F32, v.aval().shape()), env.get(v)));
        }
        return results;
    }

    private static float apply(Node n, float x, float y) {
        if (n.prim() == Prims.ADD) {
            return x + y;
        }
        if (n.prim() == Prims.SUB) {
            return x - y;
        }
        if (n.prim() == Prims.MUL) {
            return x * y;
        }
        throw new UnsupportedOperationException("test pipeline cannot evaluate " + n.prim());
    }
}
