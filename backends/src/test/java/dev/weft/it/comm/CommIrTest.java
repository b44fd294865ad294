package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBinding;
import dev.weft.spi.CommBindings;
import dev.weft.spi.CommId;
import dev.weft.spi.CommRef;
import dev.weft.tracer.Executable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lowered module of a method using two communicators and a loop: custom-call names and attributes, and one
 * token chain per communicator that every effectful call continues, through the loop's carry.
 */
class CommIrTest {
    private static final Pattern CALL = Pattern.compile("^\\s*(%\\w+)(?::(\\d+))? = \"stablehlo\\.custom_call\"\\("
            + "([^)]*)\\) \\{call_target_name = \"weft\\.mpi\\.(\\w+)\", has_side_effect = (true|false),.*?"
            + "backend_config = \\{comm = \"([^\"]+)\"");
    private static final Pattern WHILE = Pattern.compile("^\\s*(%\\w+):\\d+ = \"stablehlo\\.while\"\\(([^)]*)\\)");
    private static final Pattern BLOCK = Pattern.compile("^\\s*\\^bb0\\(([^)]*)\\):");
    private static final Pattern RETURN = Pattern.compile("^\\s*\"stablehlo\\.return\"\\(([^)]*)\\)");
    private static final Pattern WHILE_END = Pattern.compile("^\\s*\\}\\) \\{");

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor twoCommunicators(Comm world, Comm dup, Tensor x) {
        Tensor shifted = x.add(world.rankTensor().cast(x.dtype()));
        Tensor a = world.allreduce(shifted, ReduceOp.SUM);
        Tensor b = dup.bcast(a, 0);
        Tensor looped = Weft.fori(0, 4, b, (i, acc) -> world.allreduce(acc, ReduceOp.MAX).mul(0.5));
        Tensor gathered = dup.allgather(looped);
        world.barrier();
        return gathered;
    }

    /** One custom call: its target, whether it is effectful, its communicator. */
    private record Call(String target, boolean effectful, String comm) {
    }

    private static String[] lowerOnRankZero() {
        String[][] mlir = new String[2][];
        FakeWorld.run(2, w -> CommBinding.with(w, () -> {
            Comm world = Comm.of(w);
            Comm dup = world.dup();
            String text = Weft.lower(CommIrTest.class, "twoCommunicators", world, dup,
                    TensorSpec.of(DType.F32, 3, 5)).toMlir();
            mlir[world.rank()] = new String[] {text, dup.handle().name()};
            return null;
        }));
        assertThat(mlir[1][0]).as("one program serves every rank").isEqualTo(mlir[0][0]);
        return mlir[0];
    }

    /**
     * A module names its communicators by reference and holds none: lowered in one fake world, it prints as a
     * module lowered in another, and runs there bound to that world's communicators of the same names, with the
     * result of the compiled method.
     */
    @Test
    void aModuleNamesItsCommunicatorsByReferenceAndRunsBoundToAnotherRunsOnes() {
        Module[] lowered = new Module[2];
        FakeWorld.run(2, w -> CommBinding.with(w, () -> {
            Comm world = Comm.of(w);
            lowered[world.rank()] = (Module) Weft.lower(CommIrTest.class, "twoCommunicators", world, world.dup(),
                    TensorSpec.of(DType.F32, 3, 5));
            return null;
        }));
        List<CommId> named = IrWalk.ops(lowered[0])
                .flatMap(op -> op.attr("backend_config") instanceof Attr.CommConfig c ? Stream.of(c.op().comm()) : Stream.of())
                .toList();
        assertThat(named).hasSize(6).allMatch(c -> c instanceof CommRef)
                .extracting(CommId::name).containsOnly("world", "world.dup#0");
        FakeWorld.run(2, w -> CommBinding.with(w, () -> {
            Comm world = Comm.of(w);
            Comm dup = world.dup();
            Module m = lowered[world.rank()];
            assertThat(Weft.lower(CommIrTest.class, "twoCommunicators", world, dup, TensorSpec.of(DType.F32, 3, 5))
                    .toMlir()).isEqualTo(m.toMlir());
            Tensor x = Tensor.arange(DType.F32, 15).reshape(3, 5).add(world.rank());
            Executable exe = new CpuTarget().executable(m, CommBindings.of(List.of(w, dup.handle())));
            assertThat(exe.run(List.of(x)).getFirst().toFloatArray())
                    .containsExactly(twoCommunicators(world, dup, x).toFloatArray());
            return null;
        }));
    }

    @Test
    void commOpsAreSideEffectingCustomCallsWithTheirConfig() {
        String[] lowered = lowerOnRankZero();
        String mlir = lowered[0];
        String dupName = lowered[1];
        assertThat(mlir).contains("call_target_name = \"weft.mpi.allreduce\", has_side_effect = true")
                .contains("backend_config = {comm = \"world\", reduce_op = \"sum\", dtype = \"f32\", count = 15 : i64}")
                .contains("backend_config = {comm = \"world\", reduce_op = \"max\"")
                .contains("call_target_name = \"weft.mpi.bcast\"")
                .contains("backend_config = {comm = \"" + dupName + "\", root = 0 : i64")
                .containsPattern("call_target_name = \"weft.mpi.comm_rank\", has_side_effect = false")
                .contains("!stablehlo.token")
                .containsPattern("\"stablehlo\\.while\"[^\\n]*\\n(.*\\n)*.*-> \\(tensor<i32>, tensor<3x5xf32>, "
                        + "!stablehlo\\.token\\)");
    }

    @Test
    void everyEffectfulCallContinuesItsCommunicatorsTokenChain() {
        String[] lowered = lowerOnRankZero();
        List<String> carried = new ArrayList<>();
        List<Call> calls = chains(lowered[0], carried);
        assertThat(carried).as("the loop with an allreduce carries exactly the world's token").containsExactly("world");
        assertThat(calls).extracting(Call::target, Call::comm).containsExactly(
                Tuple.tuple("comm_rank", "world"),
                Tuple.tuple("allreduce", "world"),
                Tuple.tuple("bcast", lowered[1]),
                Tuple.tuple("allreduce", "world"),
                Tuple.tuple("allgather", lowered[1]),
                Tuple.tuple("barrier", "world"));
        assertThat(calls).filteredOn(c -> !c.effectful()).extracting(Call::target).containsExactly("comm_rank");
    }

    /**
     * Walks the module in order, following each communicator's current token: an effectful call must consume it
     * (the first one, a fresh {@code after_all} token); a while that carries it (recorded in {@code carriedByLoops})
     * passes it into its body, gets the body's last token back and yields it as a result. Fusion regions (pure,
     * without tokens) are skipped.
     */
    private static List<Call> chains(String mlir, List<String> carriedByLoops) {
        Map<String, String> current = new HashMap<>();
        Deque<Map<String, Integer>> loops = new ArrayDeque<>();
        Deque<String> loopResults = new ArrayDeque<>();
        List<String> fresh = new ArrayList<>();
        List<Call> calls = new ArrayList<>();
        boolean inFusion = false;
        for (String line : mlir.split("\n")) {
            Matcher m;
            if (inFusion || line.contains("= \"weft.fusion\"(")) {
                inFusion = !WHILE_END.matcher(line).find();
            } else if (line.contains("\"stablehlo.after_all\"()")) {
                fresh.add(line.trim().split(" ")[0]);
            } else if ((m = CALL.matcher(line)).find()) {
                List<String> operands = operands(m.group(3));
                String comm = m.group(6);
                boolean effectful = m.group(5).equals("true");
                String in = effectful ? operands.getLast() : null;
                String out = m.group(2) == null ? m.group(1) : m.group(1) + "#" + (Integer.parseInt(m.group(2)) - 1);
                if (effectful) {
                    String expected = current.get(comm);
                    if (expected == null) {
                        assertThat(fresh).as("first token of %s", comm).contains(in);
                        fresh.remove(in);
                    } else {
                        assertThat(in).as("token into %s on %s", m.group(4), comm).isEqualTo(expected);
                    }
                    current.put(comm, out);
                } else {
                    assertThat(line).doesNotContain("!stablehlo.token");
                }
                calls.add(new Call(m.group(4), effectful, comm));
            } else if ((m = WHILE.matcher(line)).find()) {
                List<String> operands = operands(m.group(2));
                Map<String, Integer> carried = new HashMap<>();
                current.forEach((comm, token) -> {
                    if (operands.contains(token)) {
                        carried.put(comm, operands.indexOf(token));
                    }
                });
                carriedByLoops.addAll(carried.keySet());
                loops.push(carried);
                loopResults.push(m.group(1));
            } else if ((m = BLOCK.matcher(line)).find() && !loops.isEmpty()) {
                List<String> args = operands(m.group(1)).stream().map(a -> a.split(":")[0]).toList();
                loops.peek().forEach((comm, i) -> current.put(comm, args.get(i)));
            } else if ((m = RETURN.matcher(line)).find() && !loops.isEmpty()) {
                List<String> results = operands(m.group(1));
                if (results.size() > 1) {
                    loops.peek().forEach((comm, i) -> assertThat(results.get(i))
                            .as("the loop body returns the token of %s", comm).isEqualTo(current.get(comm)));
                }
            } else if (WHILE_END.matcher(line).find() && !loops.isEmpty()) {
                String result = loopResults.pop();
                loops.pop().forEach((comm, i) -> current.put(comm, result + "#" + i));
            }
        }
        return calls;
    }

    private static List<String> operands(String list) {
        return list.isBlank() ? List.of() : Arrays.stream(list.split(",\\s*")).map(String::trim).toList();
    }

    @Test
    void theModuleParsesWithUpstreamMlirOpt() throws IOException, InterruptedException {
        Path tool = Stream.of("/usr/bin/mlir-opt-19", "/usr/lib/llvm-19/bin/mlir-opt").map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        assumeTrue(tool != null, "mlir-opt 19 is not installed");
        Process p = new ProcessBuilder(tool.toString(), "--allow-unregistered-dialect").redirectErrorStream(true)
                .start();
        try (var in = p.getOutputStream()) {
            in.write(lowerOnRankZero()[0].getBytes(StandardCharsets.UTF_8));
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("weft.mpi.allreduce");
    }
}
