package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Runs NVIDIA's {@code ptxas} on generated modules; tests using it are skipped where it is not installed. */
public final class Ptxas {
    private static final Optional<Path> PTXAS = Stream.concat(
            Stream.of(System.getenv().getOrDefault("PATH", "").split(":")).map(d -> Path.of(d, "ptxas")),
            Stream.of(Path.of("/usr/local/cuda/bin/ptxas"))).filter(Files::isExecutable).findFirst();

    private Ptxas() {
    }

    /** Assembles {@code ptx} for {@code sm_90} and fails with ptxas's diagnostics unless it exits 0. */
    public static void assemble(String ptx) throws IOException, InterruptedException {
        assumeTrue(PTXAS.isPresent(), "ptxas is not installed");
        Path dir = Files.createTempDirectory("weft-ptx");
        Path in = dir.resolve("module.ptx"), out = dir.resolve("module.cubin");
        Files.writeString(in, ptx);
        Process p = new ProcessBuilder(List.of(PTXAS.get().toString(), "--gpu-name", "sm_90", "-o", out.toString(),
                in.toString())).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("ptxas output:\n%s\nmodule:\n%s", log, numbered(ptx)).isZero();
        Files.deleteIfExists(out);
        Files.delete(in);
        Files.delete(dir);
    }

    private static String numbered(String text) {
        String[] lines = text.split("\n");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < lines.length; i++) {
            b.append(i + 1).append(": ").append(lines[i]).append('\n');
        }
        return b.toString();
    }
}
