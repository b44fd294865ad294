package dev.weft.bench.weft;

import dev.weft.backends.cpu.cc.CCompiler;
import dev.weft.spi.Setting;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Case 7: cold start, each sample a fresh process, the kinds in turn in every repetition. Its own series is
 * {@code bin/weft run -np 1 --comm fake Pi} end to end (wall seconds); alongside: the same with {@code WEFT_AOT=0},
 * {@code java -javaagent:<tracer jar> ... Pi} with and without the archive that {@code bin/weft} made (the JDK's AOT
 * cache where a C compiler makes fused loops native, else a class-data archive; the JVM's flags follow the
 * launcher's), and {@link ColdStartProbe}'s steps: Byte Buddy's attach (external, and in-process with
 * {@code -Djdk.attach.allowAttachSelf=true}), the agent's installation, and the first compiled call of a 6-op
 * program with and without the archive; and {@link CompileCacheProbe}'s first call of each of its programs in
 * a process that fills a new persistent compile cache, then in one that reads it. Run from the repository root (as {@code bin/weft bench} runs its
 * programs), by {@code bin/weft run}, so the archive exists. Usage: {@code REPS}. The check is the probe's sum.
 */
public final class ColdBench {
    /** Names of the series, as the driver reads them. */
    public static final String NO_ARCHIVE_RUN = "bin/weft run, WEFT_AOT=0";
    public static final String JAVA_ARCHIVE = "java -javaagent Pi, archive";
    public static final String JAVA = "java -javaagent Pi";
    public static final String ATTACH = "attach (Byte Buddy's attacher JVM)";
    public static final String ATTACH_SELF = "attach (in-process)";
    public static final String AGENT = "agent installation";
    public static final String FIRST_CALL_ARCHIVE = "first compiled call, archive";
    public static final String FIRST_CALL = "first compiled call";

    /** The series of {@link CompileCacheProbe}'s {@code program} in a process that fills the compile cache. */
    public static String emptyCache(String program) {
        return "first call, empty compile cache: " + program;
    }

    /** The series of {@link CompileCacheProbe}'s {@code program} in the next process, which reads the cache. */
    public static String warmCache(String program) {
        return "first call, warm compile cache: " + program;
    }

    private ColdBench() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        long reps = Report.args("ColdBench", "REPS", args)[0];
        Path root = Path.of("").toAbsolutePath();
        String cp = Files.readString(root.resolve("examples/target/weft.classpath")).strip();
        String probeCp = cp + File.pathSeparator + root.resolve("bench/target/classes");
        String agent = Arrays.stream(cp.split(File.pathSeparator)).filter(e -> e.contains("/weft-tracer-"))
                .findFirst().orElseThrow(() -> new IllegalStateException("no weft-tracer jar on " + cp));
        boolean aot = launcherFindsCompiler();
        Optional<String> archive = archive(root.resolve("examples/target/aot"), aot ? ".aot" : ".jsa");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> jvm = aot ? List.of(java, "--enable-native-access=ALL-UNNAMED")
                : List.of(java, "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector");
        List<String> withAgent = concat(jvm, List.of("-javaagent:" + agent));
        List<String> withArchive = concat(withAgent, archive.map(a -> List.of(
                (aot ? "-XX:AOTCache=" : "-XX:SharedArchiveFile=") + a)).orElse(List.of()));
        List<String> pi = List.of("-cp", cp, "dev.weft.examples.Pi");
        List<String> probe = List.of("-cp", probeCp, ColdStartProbe.class.getName());
        List<String> weft = List.of(root.resolve("bin/weft").toString(), "run", "-np", "1", "--comm", "fake", "Pi");
        Report report = new Report(System.out, true);
        if (archive.isEmpty()) {
            report.info("no " + (aot ? "AOT cache" : "class-data archive")
                    + " under examples/target/aot (WEFT_AOT=0?): its series ran without one");
        }
        for (long r = 0; r < reps; r++) {
            report.sample(wall(weft, Map.of()));
            report.alongside(NO_ARCHIVE_RUN).sample(wall(weft, Map.of("WEFT_AOT", "0")));
            report.alongside(JAVA_ARCHIVE).sample(wall(concat(withArchive, pi), Map.of()));
            report.alongside(JAVA).sample(wall(concat(withAgent, pi), Map.of()));
            Map<String, Double> cold = steps(concat(jvm, List.of("-XX:+EnableDynamicAgentLoading"), probe));
            report.alongside(ATTACH).sample(cold.get("attach"));
            report.alongside(AGENT).sample(cold.get("agent"));
            report.alongside(FIRST_CALL).sample(cold.get("compiled"));
            report.alongside(ATTACH_SELF).sample(steps(concat(jvm, List.of("-XX:+EnableDynamicAgentLoading",
                    "-Djdk.attach.allowAttachSelf=true"), probe)).get("attach"));
            Map<String, Double> warm = steps(concat(withArchive, List.of("-Dweft.probe.agentLoaded=true"), probe));
            report.alongside(FIRST_CALL_ARCHIVE).sample(warm.get("compiled"));
            for (String program : CompileCacheProbe.PROGRAMS) {
                List<String> command = concat(withArchive, List.of("-cp", probeCp, CompileCacheProbe.class.getName(),
                        program));
                Path cache = Files.createTempDirectory("weft-cache-bench");
                try {
                    Map<String, String> env = Map.of(Setting.CACHE_DIR.env(), cache.toString());
                    Map<String, Double> first = steps(command, env);
                    Map<String, Double> second = steps(command, env);
                    if (!first.get("check").equals(second.get("check"))) {
                        throw new IllegalStateException(program + " gave " + first.get("check") + " compiling and "
                                + second.get("check") + " from the cache");
                    }
                    report.alongside(emptyCache(program)).sample(first.get("compiled"));
                    report.alongside(warmCache(program)).sample(second.get("compiled"));
                } finally {
                    try (Stream<Path> files = Files.walk(cache)) {
                        for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                            Files.delete(f);
                        }
                    }
                }
            }
            if (r == reps - 1) {
                report.check(warm.get("check"));
            }
        }
    }

    /**
     * bin/weft's choice (its jvm_mode): the AOT cache and no incubator module where a C compiler is found; a
     * {@code WEFT_CC} that names no executable counts as none there, as it does here.
     */
    private static boolean launcherFindsCompiler() {
        try {
            return CCompiler.configured().isPresent();
        } catch (IllegalStateException notExecutable) {
            return false;
        }
    }

    /** The file of bin/weft's archive of kind {@code extension} in {@code dir}, if there is one. */
    private static Optional<String> archive(Path dir, String extension) throws IOException {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(Path::toString).filter(f -> f.endsWith(extension)).findFirst();
        }
    }

    /** Wall seconds of {@code command}, which must exit 0. */
    private static double wall(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        run(command, env);
        return Report.since(t0);
    }

    /** The probe's {@code <name> <ms>} lines (and its check), in seconds. */
    private static Map<String, Double> steps(List<String> command) throws IOException, InterruptedException {
        return steps(command, Map.of());
    }

    /** {@link #steps(List)} with {@code env} added to the probe's environment. */
    private static Map<String, Double> steps(List<String> command, Map<String, String> env)
            throws IOException, InterruptedException {
        Map<String, Double> steps = new HashMap<>();
        for (String line : run(command, env).lines().toList()) {
            String[] f = line.split(" ");
            if (f.length == 2 && f[1].matches("-?[0-9.Ee+-]+")) {
                steps.put(f[0], f[0].equals("check") ? Double.parseDouble(f[1]) : Double.parseDouble(f[1]) * 1e-3);
            }
        }
        return steps;
    }

    /**
     * Runs {@code command} with the environment this program got, less the benchmark's heap options (pre-touching
     * a 1 GiB heap would be most of a cold start), plus {@code env}; returns its stdout.
     */
    private static String run(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        String tool = pb.environment().getOrDefault("JAVA_TOOL_OPTIONS", "").replace(Report.JVM_OPTIONS, "").strip();
        if (tool.isEmpty()) {
            pb.environment().remove("JAVA_TOOL_OPTIONS");
        } else {
            pb.environment().put("JAVA_TOOL_OPTIONS", tool);
        }
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new UncheckedIOException(new IOException(String.join(" ", command) + " exited with status "
                    + p.exitValue() + ": " + out));
        }
        return out;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static List<String> concat(List<String> a, List<String> b, List<String> c) {
        return concat(concat(a, b), c);
    }
}
