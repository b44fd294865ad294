package dev.weft.it.mpi;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Launches a main class of this test class path as an MPI job ({@code mpirun -np N java ... CLASS ARGS}) or as a
 * plain JVM, bounded by a timeout. The flags suit a container: root is allowed, ranks may outnumber cores, no
 * binding, shared-memory transport only.
 */
public final class Mpirun {
    /** What a launch left: its exit status ({@code -1} if it was killed at the timeout), output and duration. */
    public record Result(int exitCode, String output, Duration elapsed) {
        public boolean timedOut() {
            return exitCode == -1;
        }
    }

    private Mpirun() {
    }

    /** The {@code mpirun} on the PATH, if Open MPI's or MPICH's launcher is installed. */
    static Optional<Path> find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "mpirun");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Runs {@code mainClass} on {@code ranks} MPI ranks. */
    static Result run(int ranks, Duration timeout, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return run(ranks, timeout, Map.of(), mainClass, args);
    }

    /** Runs {@code mainClass} on {@code ranks} MPI ranks with {@code env} added to the environment. */
    static Result run(int ranks, Duration timeout, Map<String, String> env, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(find().orElseThrow().toString(), "--allow-run-as-root",
                "--oversubscribe", "--bind-to", "none", "-np", Integer.toString(ranks)));
        cmd.addAll(java(mainClass, args));
        Map<String, String> all = new HashMap<>(env);
        all.put("OMPI_MCA_btl", "self,vader");
        all.put("OMPI_MCA_rmaps_base_oversubscribe", "1");
        return launch(cmd, timeout, all);
    }

    /** Runs {@code mainClass} in a plain JVM, with no MPI launcher around it. */
    public static Result plain(Duration timeout, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return launch(java(mainClass, args), timeout, Map.of());
    }

    private static List<String> java(Class<?> mainClass, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector",
                "-XX:+EnableDynamicAgentLoading", "-Dnet.bytebuddy.safe=true",
                "-Xss8m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), mainClass.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static Result launch(List<String> cmd, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("OMPI_") || k.startsWith("PMI"));
        pb.environment().putAll(env);
        Path log = Files.createTempFile("weft-mpirun", ".log");
        pb.redirectOutput(log.toFile());
        long start = System.nanoTime();
        Process p = pb.start();
        boolean done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new Result(done ? p.exitValue() : -1, output, elapsed);
    }
}
