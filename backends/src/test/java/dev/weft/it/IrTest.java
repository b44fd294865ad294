package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cli.PrintIr;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lowered module's text: {@code func.func @main}, StableHLO ops located in this file, parseable by mlir-opt. */
class IrTest {
    private static final List<Path> MLIR_OPT = List.of(Path.of("/usr/bin/mlir-opt-19"),
            Path.of("/usr/lib/llvm-19/bin/mlir-opt"));
    private static int mlpLine;
    private static int loopLine;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static int here() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    @Compile
    static Tensor mlp(Tensor x, Tensor w) {
        mlpLine = here(); return x.matmul(w).maximum(0).sum(1);
    }

    @Compile
    static Tensor smoothing(Tensor x, int steps) {
        loopLine = here(); return Weft.fori(0, steps, x, (i, c) -> Weft.cond(c.sum().gt(0),
                () -> c.mul(0.5), () -> c.sub(1)));
    }

    @Compile
    static Tensor reshaping(Tensor x) {
        return Tensor.concat(0, x.transpose(), x.slice(new long[] {0, 0}, new long[] {1, 4})).reshape(-1).pad(
                new long[] {1}, new long[] {2}, 3);
    }

    @Compile
    static Tensor stencil(Tensor x) {
        Tensor p = Tensor.concat(0, x.slice(new long[] {0, 0}, new long[] {1, 4}), x).pad(new long[] {0, 1},
                new long[] {1, 0}, 2);
        return p.slice(new long[] {0, 0}, new long[] {4, 4}).add(p.slice(new long[] {1, 1}, new long[] {5, 5}))
                .mul(x);
    }

    private static List<String> modules() {
        return List.of(
                Weft.lower(IrTest.class, "mlp", TensorSpec.of(DType.F32, 8, 4), TensorSpec.of(DType.F32, 4, 3))
                        .toMlir(),
                Weft.lower(IrTest.class, "smoothing", TensorSpec.of(DType.F64, 5), 10).toMlir(),
                Weft.lower(IrTest.class, "reshaping", TensorSpec.of(DType.I32, 4, 4)).toMlir(),
                Weft.lower(IrTest.class, "stencil", TensorSpec.of(DType.F64, 4, 4)).toMlir());
    }

    @Test
    void modulesHaveMainStableHloOpsAndUserLocations() {
        List<String> mods = modules();
        for (String m : mods) {
            assertThat(m).contains("func.func @main").contains("stablehlo.");
        }
        assertThat(mods.get(0)).contains("stablehlo.dot_general").contains("stablehlo.maximum")
                .contains("weft.fused_reduce").contains("loc(\"IrTest.java\":" + mlpLine + ":0)");
        assertThat(mods.get(1)).contains("stablehlo.while").contains("stablehlo.if")
                .contains("loc(\"IrTest.java\":" + loopLine + ":0)").doesNotContain("loc(\"Weft.java\"");
        assertThat(mods.get(2)).contains("stablehlo.transpose").contains("stablehlo.concatenate")
                .contains("stablehlo.pad").contains("stablehlo.reshape").contains("stablehlo.slice");
        assertThat(mods.get(3)).contains("weft.fusion").contains("weft.pieces = [[{operand = ")
                .doesNotContain("stablehlo.pad").doesNotContain("stablehlo.concatenate");
    }

    @Test
    void modulesParseWithMlirOpt() throws IOException, InterruptedException {
        Path tool = MLIR_OPT.stream().filter(Files::isExecutable).findFirst().orElse(null);
        assumeTrue(tool != null, "mlir-opt 19 is not installed");
        for (String m : modules()) {
            Path file = Files.createTempFile("weft-ir", ".mlir");
            try {
                Files.writeString(file, m);
                Process p = new ProcessBuilder(tool.toString(), "--allow-unregistered-dialect", file.toString())
                        .redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(p.exitValue()).as(out + "\n--- module ---\n" + m).isZero();
            } finally {
                Files.delete(file);
            }
        }
    }

    @Test
    void printIrCliPrintsTheModule() throws ClassNotFoundException {
        PrintStream saved = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            PrintIr.main(new String[] {"dev.weft.it.IrTest#reshaping", "i32[4,4]"});
        } finally {
            System.setOut(saved);
        }
        String text = buf.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("func.func @main").contains("tensor<4x4xi32>").contains("stablehlo.pad")
                .contains("loc(\"IrTest.java\":");
    }
}
