package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.CombineAllReduces;
import dev.weft.lowering.passes.Pass;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.StageListener;
import dev.weft.prim.CommPrims;
import dev.weft.spi.CommBindings;
import dev.weft.testing.Ranks;
import dev.weft.tracer.CompileGate;
import dev.weft.tracer.Executable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;

/**
 * A data-parallel SGD step of a 3-layer MLP with replicated parameters, whose gradient allreduces (one per
 * parameter's cotangent, from the reverse pass of each implicit {@code pvary}) the {@code combine-allreduces} pass
 * fuses into buckets: compiled, it equals the eager step and the step of the global mean loss on one process, and,
 * bit for bit, the step compiled without the pass; its module has fewer allreduces than parameters, and the biases'
 * cotangents travel at the biases' size ({@code sum-before-allreduce}).
 */
public class GradientBucketsTest {
    private static final int LOCAL = 4;
    private static final long[] SIZES = {5, 6, 4, 3};
    private static final double LR = 0.1;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    record Mlp(Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor w3, Tensor b3) {
        List<Tensor> list() {
            return List.of(w1, b1, w2, b2, w3, b3);
        }
    }

    private static Tensor loss(Mlp p, Tensor x, Tensor y) {
        Tensor h = x.matmul(p.w1()).add(p.b1()).tanh();
        h = h.matmul(p.w2()).add(p.b2()).tanh();
        Tensor r = h.matmul(p.w3()).add(p.b3()).sub(y);
        return r.mul(r).sum();
    }

    /** One SGD step on the mean loss over every rank's rows, the parameters replicated. */
    static List<Tensor> stepEager(Comm c, Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor w3, Tensor b3, Tensor x,
                                  Tensor y) {
        Mlp p = new Mlp(w1, b1, w2, b2, w3, b3);
        double rows = (double) LOCAL * c.size();
        Mlp g = Weft.grad(c.replicated(p), q -> c.allreduce(loss(q, x, y), ReduceOp.SUM).div(rows));
        List<Tensor> next = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            next.add(p.list().get(i).sub(g.list().get(i).mul(LR)));
        }
        return next;
    }

    @Compile
    static List<Tensor> step(Comm c, Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor w3, Tensor b3, Tensor x,
                             Tensor y) {
        return stepEager(c, w1, b1, w2, b2, w3, b3, x, y);
    }

    private static Tensor random(Random rnd, long... shape) {
        int n = 1;
        for (long s : shape) {
            n *= (int) s;
        }
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = rnd.nextDouble() * 2 - 1;
        }
        return Tensor.of(a, shape);
    }

    private static Mlp parameters() {
        Random rnd = new Random(5);
        return new Mlp(random(rnd, SIZES[0], SIZES[1]), random(rnd, SIZES[1]), random(rnd, SIZES[1], SIZES[2]),
                random(rnd, SIZES[2]), random(rnd, SIZES[2], SIZES[3]), random(rnd, SIZES[3]));
    }

    /** Every rank's rows: x then y. */
    private static Tensor[] data(int ranks) {
        Random rnd = new Random(7);
        return new Tensor[] {random(rnd, (long) ranks * LOCAL, SIZES[0]), random(rnd, (long) ranks * LOCAL, SIZES[3])};
    }

    /** This rank's arguments of {@link #step}, after the communicator. */
    private static List<Tensor> arguments(Comm c) {
        Tensor[] all = data(c.size());
        long[] from = {(long) c.rank() * LOCAL, 0};
        Tensor x = all[0].slice(from, new long[] {from[0] + LOCAL, SIZES[0]});
        Tensor y = all[1].slice(from, new long[] {from[0] + LOCAL, SIZES[3]});
        List<Tensor> args = new ArrayList<>(parameters().list());
        args.add(x);
        args.add(y);
        return args;
    }

    private static List<Tensor> compiled(Comm c, List<Tensor> a) {
        return step(c, a.get(0), a.get(1), a.get(2), a.get(3), a.get(4), a.get(5), a.get(6), a.get(7));
    }

    /** The step of the mean loss over all rows on one process, without communication: the reference. */
    private static List<Tensor> reference(int ranks) {
        Mlp p = parameters();
        Tensor[] all = data(ranks);
        Mlp g = Weft.grad(p, q -> loss(q, all[0], all[1]).div((double) LOCAL * ranks));
        List<Tensor> next = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            next.add(p.list().get(i).sub(g.list().get(i).mul(LR)));
        }
        return next;
    }

    /** The CPU target with {@code combining} in place of its {@code combine-allreduces} (none if null). */
    record CpuWith(Pass combining) implements Target {
        @Override
        public String name() {
            return CpuTarget.NAME;
        }

        @Override
        public Pipeline pipeline() {
            List<Pass> passes = new ArrayList<>();
            for (Pass p : new CpuTarget().pipeline().passes()) {
                if (!(p instanceof CombineAllReduces)) {
                    passes.add(p);
                } else if (combining != null) {
                    passes.add(combining);
                }
            }
            return Pipeline.of(passes.toArray(Pass[]::new));
        }

        @Override
        public String commCallPrefix() {
            return new CpuTarget().commCallPrefix();
        }

        @Override
        public Executable executable(Module module, CommBindings comms) {
            return new CpuTarget().executable(module, comms);
        }
    }

    private static Object[] traceArguments(Comm c, List<Tensor> a) {
        List<Object> args = new ArrayList<>(List.of(c));
        args.addAll(a);
        return args.toArray();
    }

    /** {@link #step} compiled for {@code target} and run on this rank's arguments. */
    private static List<Tensor> compiledFor(Target target, Comm c, List<Tensor> a) {
        Graph g = CompileGate.trace(GradientBucketsTest.class, "step", traceArguments(c, a));
        Module m = Lowering.lower(g, target, StageListener.NONE);
        return target.executable(m, CommPrims.bindings(g.body())).run(a);
    }

    /**
     * The compiled step against the eager one and the one-process reference, within {@code 1e-12}; MPI's runs
     * check this too.
     */
    public static void checkTrainingStep(Comm c) {
        List<Tensor> a = arguments(c);
        List<Tensor> expected = reference(c.size());
        List<Tensor> eager = stepEager(c, a.get(0), a.get(1), a.get(2), a.get(3), a.get(4), a.get(5), a.get(6),
                a.get(7));
        List<Tensor> got = compiled(c, a);
        for (int i = 0; i < 6; i++) {
            assertThat(eager.get(i).toDoubleArray()).as("eager parameter %d", i)
                    .containsExactly(expected.get(i).toDoubleArray(), within(1e-12));
            assertThat(got.get(i).toDoubleArray()).as("compiled parameter %d", i)
                    .containsExactly(expected.get(i).toDoubleArray(), within(1e-12));
        }
    }

    @Ranks({1, 2, 3})
    void compiledStepEqualsEagerTheReferenceAndTheStepWithoutThePass(Comm c) {
        checkTrainingStep(c);
        List<Tensor> a = arguments(c);
        List<Tensor> with = compiled(c, a);
        List<Tensor> without = compiledFor(new CpuWith(null), c, a);
        List<Tensor> capped = compiledFor(new CpuWith(new CombineAllReduces(256)), c, a);
        for (int i = 0; i < 6; i++) {
            assertThat(with.get(i).toDoubleArray()).as("parameter %d", i)
                    .containsExactly(without.get(i).toDoubleArray());
            assertThat(capped.get(i).toDoubleArray()).as("parameter %d, 256-byte buckets", i)
                    .containsExactly(without.get(i).toDoubleArray());
        }
    }

    private static final Pattern CALL = Pattern.compile("call_target_name = \"weft\\.mpi\\.(allreduce|iallreduce)\""
            + ".*?count = (\\d+) : i64");

    /** The element counts of the module's {@code allreduce}s and {@code iallreduce}s, by kind. */
    private static Map<String, List<Long>> counts(String mlir) {
        Map<String, List<Long>> out = new LinkedHashMap<>();
        out.put("allreduce", new ArrayList<>());
        out.put("iallreduce", new ArrayList<>());
        Matcher m = CALL.matcher(mlir);
        while (m.find()) {
            out.get(m.group(1)).add(Long.parseLong(m.group(2)));
        }
        return out;
    }

    @Ranks({2})
    void theModuleHasFewerAllreducesThanParameters(Comm c) {
        Object[] specs = new Object[9];
        specs[0] = c;
        List<Tensor> a = arguments(c);
        for (int i = 0; i < 8; i++) {
            specs[i + 1] = TensorSpec.of(DType.F64, a.get(i).shape());
        }
        Map<String, String> stages = new LinkedHashMap<>();
        Graph g = CompileGate.trace(GradientBucketsTest.class, "step", specs);
        Lowering.lower(g, new CpuWith(new CombineAllReduces(256)), stages::put);
        Map<String, List<Long>> before = counts(stages.get("lowered"));
        assertThat(before.get("allreduce")).as("the loss's, one per parameter's cotangent").hasSize(7);
        long weights = 0;
        long biases = 0;
        for (int layer = 0; layer < 3; layer++) {
            weights += SIZES[layer] * SIZES[layer + 1];
            biases += SIZES[layer + 1];
        }
        assertThat(before.get("allreduce").stream().mapToLong(Long::longValue).sum())
                .as("the loss, the weights' cotangents, the biases' before their sum over the rows")
                .isEqualTo(1 + weights + LOCAL * biases);
        long total = 1 + weights + biases;

        Map<String, List<Long>> fused = counts(Weft.lower(GradientBucketsTest.class, "step", specs).toMlir());
        assertThat(fused.get("allreduce")).isEmpty();
        assertThat(fused.get("iallreduce")).as("the default cap takes every independent allreduce, the biases' "
                + "cotangents summed over the rows first (sum-before-allreduce)").containsExactly(total);

        Map<String, List<Long>> capped = counts(stages.get("plan-buffers"));
        assertThat(capped.get("allreduce").size() + capped.get("iallreduce").size()).isBetween(2, 5);
        assertThat(capped.get("iallreduce")).isNotEmpty().allMatch(n -> n * 8 <= 256);
        assertThat(capped.get("allreduce").stream().mapToLong(Long::longValue).sum()
                + capped.get("iallreduce").stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
    }
}
