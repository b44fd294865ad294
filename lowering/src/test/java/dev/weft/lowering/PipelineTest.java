package dev.weft.lowering;

import dev.weft.spi.OutputDirectory;
import dev.weft.lowering.passes.DeadCodeElimination;
import static dev.weft.lowering.Ops.names;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.passes.Pass;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.lowering.passes.StageListener;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.graph.Graph;
import dev.weft.graph.Var;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineTest {
    /** {@code exp(x) + exp(x)} negated, plus an unused {@code tanh(x)}. */
    private static Graph graph() {
        GraphBuilder g = new GraphBuilder();
        Var x = g.param(Aval.of(DType.F32, 4));
        Var e1 = g.op(Prims.EXP, x);
        Var e2 = g.op(Prims.EXP, x);
        g.op(Prims.TANH, x);
        return g.graph(g.op(Prims.NEG, g.op(Prims.ADD, e1, e2)));
    }

    @Test
    void pipelineReportsEveryStageInOrder() {
        List<String> stages = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        Module m = Lowering.lower(graph(), TestTarget.CPU, (stage, mlir) -> {
            stages.add(stage);
            texts.add(mlir);
        });

        assertThat(stages).containsExactly("lowered", "verify", "thread-tokens", "dce", "cse", "fuse-elementwise",
                "fuse-reductions", "verify", "plan-buffers");
        assertThat(TestTarget.CPU.pipeline().passes()).extracting(Pass::name).containsExactlyElementsOf(stages.subList(1, 9));
        assertThat(texts.get(0)).contains("stablehlo.tanh");
        assertThat(texts.get(3)).doesNotContain("stablehlo.tanh");
        assertThat(texts.get(8)).isEqualTo(m.toMlir()).contains("weft.last_use = array<i64");

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = m.main().body().ops().getFirst();
        assertThat(names(fusion.regions().getFirst())).containsExactly(ElementwiseOp.EXP.mlirName(), ElementwiseOp.ADD.mlirName(),
                ElementwiseOp.NEG.mlirName(), StableHlo.RETURN);
        assertThat(fusion.attr(StableHlo.LAST_USE)).isEqualTo(Attr.I64Array.of(0));
    }

    @Test
    void directoryListenerWritesNumberedStageFiles(@TempDir Path dir) throws IOException {
        Path out = dir.resolve("dump");
        Lowering.lower(graph(), TestTarget.CPU, StageListener.toDirectory(new OutputDirectory(out, "WEFT_DUMP")));
        try (Stream<Path> files = Files.list(out)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted()).containsExactly("00-lowered.mlir",
                    "01-verify.mlir", "02-thread-tokens.mlir", "03-dce.mlir", "04-cse.mlir", "05-fuse-elementwise.mlir",
                    "06-fuse-reductions.mlir", "07-verify.mlir", "08-plan-buffers.mlir");
        }
        assertThat(Files.readString(out.resolve("05-fuse-elementwise.mlir"))).contains("\"weft.fusion\"");
    }

    @Test
    void customPipelinesRunOnlyTheirPasses() {
        List<String> stages = new ArrayList<>();
        Module m = Pipeline.of().then(new DeadCodeElimination())
                .run(new Lowerer(LoweringRules.discover()).lower(graph(), TestTarget.CPU), (s, t) -> stages.add(s));
        assertThat(stages).containsExactly("lowered", "dce");
        assertThat(names(m)).containsExactly(ElementwiseOp.EXP.mlirName(), ElementwiseOp.EXP.mlirName(), ElementwiseOp.ADD.mlirName(), ElementwiseOp.NEG.mlirName(),
                StableHlo.FUNC_RETURN);
    }
}
