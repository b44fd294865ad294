package dev.weft.lowering;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.graph.Graph;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.ConvertParams;
import dev.weft.prim.DynamicSliceParams;
import dev.weft.prim.IotaParams;
import dev.weft.prim.CondParams;
import dev.weft.prim.CustomJvpParams;
import dev.weft.prim.CustomVjpParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.prim.ReshapeParams;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every stage of a module using every primitive, fori, cond and a token-threaded custom call parses upstream. */
class MlirOptTest {
    private static final Aval F23 = Aval.of(DType.F32, 2, 3);

    private static Path mlirOpt() {
        Stream<Path> onPath = Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .filter(d -> !d.isEmpty())
                .flatMap(d -> Stream.of(Path.of(d, "mlir-opt"), Path.of(d, "mlir-opt-19")));
        return Stream.concat(onPath, Stream.of(Path.of("/usr/lib/llvm-19/bin/mlir-opt")))
                .filter(Files::isExecutable).findFirst().orElse(null);
    }

    private static Graph everyPrimitive(Set<Primitive<?>> used) {
        GraphBuilder g = new GraphBuilder();
        Var x = g.param(F23);
        Var y = g.param(F23);
        Var p = g.param(Aval.of(DType.BOOL, 2, 3));
        Var v = g.param(Aval.of(DType.F32, 3));
        Var w = g.param(Aval.of(DType.F32, 3, 4));
        Var pred = g.param(Aval.of(DType.BOOL));
        List<Var> outs = new ArrayList<>();
        for (Primitive<?> prim : List.of(Prims.ADD, Prims.SUB, Prims.MUL, Prims.DIV, Prims.POW, Prims.MAX, Prims.MIN,
                Prims.REM, Prims.ATAN2, Prims.LT, Prims.LE, Prims.GT, Prims.GE, Prims.EQ, Prims.NE, Prims.MATMUL)) {
            outs.add(g.op(prim, x, prim == Prims.MATMUL ? w : y));
            used.add(prim);
        }
        for (Primitive<?> prim : List.of(Prims.NEG, Prims.ABS, Prims.EXP, Prims.LOG, Prims.SQRT, Prims.RSQRT,
                Prims.TANH, Prims.SIN, Prims.COS)) {
            outs.add(g.op(prim, x));
            used.add(prim);
        }
        for (Primitive<AxesParams> prim : List.of(Prims.REDUCE_SUM, Prims.REDUCE_PROD, Prims.REDUCE_MAX,
                Prims.REDUCE_MIN)) {
            outs.add(g.op(prim, new AxesParams(List.of(1)), x));
            outs.add(g.op(prim, new AxesParams(List.of(0)), g.op(Prims.CONVERT, new ConvertParams(DType.I64), x)));
            used.add(prim);
        }
        // a reduction of a single-use fusion over the trailing axis: weft.fused_reduce
        outs.add(g.op(Prims.REDUCE_MAX, new AxesParams(List.of(1)), g.op(Prims.TANH, g.op(Prims.SUB, y, x))));
        outs.add(g.op(Prims.SELECT, p, x, y));
        outs.add(g.op(Prims.CONVERT, new ConvertParams(DType.I32), x));
        outs.add(g.op(Prims.RESHAPE, new ReshapeParams(Shape.of(3, 2)), x));
        outs.add(g.op(Prims.TRANSPOSE, new TransposeParams(List.of(1, 0)), x));
        outs.add(g.op(Prims.BROADCAST_IN_DIM, new BroadcastParams(Shape.of(2, 3), List.of(1)), v));
        outs.add(g.op(Prims.SLICE, new SliceParams(List.of(0L, 1L), List.of(1L, 3L)), x));
        outs.add(g.op(Prims.CONCAT, new ConcatParams(0), x, y));
        outs.add(g.op(Prims.PAD, new PadParams(List.of(1L, 0L), List.of(0L, 2L), -1.5), x));
        outs.add(g.op(Prims.IOTA, new IotaParams(DType.I32, 5)));
        Var at = g.param(Aval.of(DType.I32));
        outs.add(g.op(Prims.DYNAMIC_SLICE, new DynamicSliceParams(List.of(1L, 2L)), x, at, at));
        outs.add(g.op(Prims.DYNAMIC_UPDATE_SLICE, Params.NONE, x, g.op(Prims.DYNAMIC_SLICE,
                new DynamicSliceParams(List.of(1L, 3L)), y, at, at), at, at));
        outs.add(g.op(Prims.CONSTANT, new ConstantParams(Tensor.of(new float[] {1.5f, Float.NEGATIVE_INFINITY,
            Float.NaN}, 3))));
        boolean[] bits = new boolean[20];
        bits[3] = true;
        outs.add(g.op(Prims.CONSTANT, new ConstantParams(Tensor.of(bits, 20))));
        double[] wide = new double[30];
        wide[29] = 0.25;
        outs.add(g.op(Prims.CONSTANT, new ConstantParams(Tensor.of(wide, 30))));
        used.addAll(List.of(Prims.SELECT, Prims.CONVERT, Prims.RESHAPE, Prims.TRANSPOSE, Prims.BROADCAST_IN_DIM,
                Prims.SLICE, Prims.CONCAT, Prims.PAD, Prims.IOTA, Prims.CONSTANT, Prims.DYNAMIC_SLICE,
                Prims.DYNAMIC_UPDATE_SLICE));

        GraphBuilder body = g.nested();
        body.param(Aval.of(DType.I32));
        Var carry = body.param(F23);
        Var cap = body.param(F23);
        Region loop = body.region(body.op(Prims.TANH, body.op(Prims.ADD, carry, cap)));
        outs.add(g.node(Prims.FORI, new LoopParams(0, 3, loop), List.of(x, y), List.of(F23)).getFirst());
        GraphBuilder yes = g.nested();
        Region t = yes.region(yes.op(Prims.EXP, yes.param(F23)));
        GraphBuilder no = g.nested();
        Region f = no.region(no.param(F23));
        outs.add(g.node(Prims.COND, new CondParams(t, f), List.of(pred, x), List.of(F23)).getFirst());
        GraphBuilder test = g.nested();
        Var tc = test.param(F23);
        Var tx = test.param(F23);
        AxesParams all = new AxesParams(List.of(0, 1));
        Region whileCond = test.region(test.op(Prims.LT, test.op(Prims.REDUCE_SUM, all, tc),
                test.op(Prims.REDUCE_SUM, all, tx)));
        GraphBuilder step = g.nested();
        Var sc = step.param(F23);
        Var sx = step.param(F23);
        Region whileBody = step.region(step.op(Prims.ADD, sc, sx));
        outs.add(g.node(Prims.WHILE, new WhileParams(whileCond, whileBody), List.of(x, y), List.of(F23))
                .getFirst());
        used.addAll(List.of(Prims.FORI, Prims.COND, Prims.WHILE));

        GraphBuilder square = g.nested();
        Var s = square.param(F23);
        Region squared = square.region(square.op(Prims.MUL, s, s));
        outs.add(g.node(Prims.CUSTOM_JVP_CALL, new CustomJvpParams(squared, 1, (primals, tangents) -> null,
                SourceLocation.UNKNOWN), List.of(x), List.of(F23)).getFirst());
        outs.add(g.node(Prims.CUSTOM_VJP_CALL, new CustomVjpParams(squared, 1, xs -> null, (r, cts) -> null,
                SourceLocation.UNKNOWN), List.of(y), List.of(F23)).getFirst());
        used.addAll(List.of(Prims.CUSTOM_JVP_CALL, Prims.CUSTOM_VJP_CALL));
        return g.graph(outs.toArray(Var[]::new));
    }

    /** Inserts {@code token = create_token(); (x', token') = custom_call(x, token)} and also returns x'. */
    private static void addCustomCall(Module m) {
        Block main = m.main().body();
        Op ret = main.ops().removeLast();
        SourceLocation at = new SourceLocation("Test", "body", "Test.java", 99);
        Op token = new Op("stablehlo.create_token", List.of(), List.of(TokenType.INSTANCE), Map.of(), List.of(), at);
        Map<String, Attr> config = new LinkedHashMap<>();
        config.put("comm", new Attr.Str("world"));
        config.put("peer", Attr.Int.i64(1));
        config.put("tag", Attr.Int.i32(7));
        config.put("reduce_op", new Attr.Str("sum"));
        config.put("counts", Attr.I64Array.of(3, 0, 2));
        config.put("dtype", new Attr.Str("f32"));
        config.put("count", Attr.Int.i64(6));
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str("weft.mpi.send"));
        attrs.put("has_side_effect", new Attr.Bool(true));
        attrs.put("backend_config", new Attr.Dict(config));
        Value x = main.arguments().getFirst();
        Op call = new Op(StableHlo.CUSTOM_CALL, List.of(x, token.result()), List.of(x.type(), TokenType.INSTANCE),
                attrs, List.of(), at);
        main.ops().addAll(List.of(token, call));
        ret.operands().add(call.results().getFirst());
        main.ops().add(ret);
    }

    @Test
    void everyStageParsesWithUpstreamMlirOpt(@TempDir Path dir) throws Exception {
        Path bin = mlirOpt();
        assumeTrue(bin != null, "mlir-opt not found on PATH or in /usr/lib/llvm-19/bin (install mlir-19-tools)");
        Set<Primitive<?>> used = new HashSet<>();
        Graph graph = everyPrimitive(used);
        for (var field : Prims.class.getFields()) {
            if (field.get(null) instanceof Primitive<?> prim) {
                assertThat(used).as("graph uses " + prim.name()).contains(prim);
            }
        }
        Module m = new Lowerer(LoweringRules.discover()).lower(graph, TestTarget.CPU);
        addCustomCall(m);
        Map<String, String> stages = new LinkedHashMap<>();
        TestTarget.CPU.pipeline().run(m, stages::put);

        assertThat(stages.get("plan-buffers")).contains("\"stablehlo.custom_call\"", "!stablehlo.token",
                "backend_config = {comm = \"world\"", "counts = array<i64: 3, 0, 2>", "\"weft.fusion\"",
                "\"weft.fused_reduce\"",
                "\"stablehlo.while\"", "weft.counted_loop = {counter = 0 : i64, lo = ", "\"stablehlo.if\"",
                "dense<[1.5, 0xFF800000, 0x7FC00000]> : tensor<3xf32>", "dense<\"0x080000\"> : tensor<20xi1>");
        for (Map.Entry<String, String> stage : stages.entrySet()) {
            Path file = dir.resolve(stage.getKey() + ".mlir");
            Files.writeString(file, stage.getValue());
            Process proc = new ProcessBuilder(bin.toString(), "--allow-unregistered-dialect", file.toString()).redirectErrorStream(true).start();
            String output = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(proc.exitValue()).as("mlir-opt on stage " + stage.getKey() + ":\n" + output + "\n"
                    + stage.getValue()).isZero();
        }
    }
}
