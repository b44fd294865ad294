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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** Runs NVIDIA's {@code ptxas} on generated modules; tests using it are skipped where it is not installed. */
public final class Ptxas {
    private static final Optional<Path> PTXAS = Stream.concat(
            Stream.of(System.getenv().getOrDefault("PATH", "").split(":")).map(d -> Path.of(d, "ptxas")),
            Stream.of(Path.of("/usr/local/cuda/bin/ptxas"))).filter(Files::isExecutable).findFirst();

    private Ptxas() {
    }

    /** The architectures every generated kernel must assemble for: Turing, Ampere, Hopper, each at its oldest ISA. */
    public static final List<PtxTarget> TARGETS = List.of(PtxTarget.forDevice(7, 5, 13000),
            PtxTarget.forDevice(8, 0, 13000), PtxTarget.forDevice(9, 0, 13000));

    /** Assembles one module of {@code kernels} for each of {@link #TARGETS}. */
    public static void assembleForEachTarget(List<Kernel> kernels) throws IOException, InterruptedException {
        for (PtxTarget t : TARGETS) {
            assemble(t.module(kernels));
        }
    }

    /**
     * Checks the widths of {@code ptx}'s immediates ({@link Immediates}), then assembles it for the architecture
     * its {@code .target} names ({@code ptxas --gpu-name}) and fails with ptxas's diagnostics unless it exits 0.
     */
    public static void assemble(String ptx) throws IOException, InterruptedException {
        Immediates.assertFit(ptx);
        assumeTrue(PTXAS.isPresent(), "ptxas is not installed");
        Matcher target = Pattern.compile("(?m)^\\.target (sm_\\d+)").matcher(ptx);
        assertThat(target.find()).as("a .target line").isTrue();
        Path dir = Files.createTempDirectory("weft-ptx");
        Path in = dir.resolve("module.ptx"), out = dir.resolve("module.cubin");
        Files.writeString(in, ptx);
        Process p = new ProcessBuilder(List.of(PTXAS.get().toString(), "--gpu-name", target.group(1), "-o",
                out.toString(), in.toString())).redirectErrorStream(true).start();
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
