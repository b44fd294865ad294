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
 * Launches a main class of this test class path as an MPI job ({@code mpirun -np N java ... CLASS ARGS}) under
 * Open MPI or MPICH, or as a plain JVM, bounded by a timeout. The flags suit a container: root is allowed, ranks
 * may outnumber cores, no binding, shared-memory transport only (MPICH's Hydra needs no flags for any of it).
 */
public final class Mpirun {
    /** An MPI implementation, found by its launcher. */
    enum Flavor {
        OPEN_MPI("mpirun.openmpi", "Open MPI"),
        MPICH("mpirun.mpich", "HYDRA");

        private final String debianName;
        private final String versionMark;

        Flavor(String debianName, String versionMark) {
            this.debianName = debianName;
            this.versionMark = versionMark;
        }

        /**
         * The launcher: Debian's name for it ({@code mpirun.openmpi}, {@code mpirun.mpich}, which installing both
         * keeps apart), else an {@code mpirun} on the PATH whose {@code --version} names this implementation.
         */
        Optional<Path> launcher() {
            Optional<Path> named = onPath(debianName);
            if (named.isPresent()) {
                return named;
            }
            return onPath("mpirun").filter(p -> versionOf(p).contains(versionMark));
        }

        /** Why {@link #launcher} found nothing, for a skipped test. */
        String missing() {
            return this + ": neither " + debianName + " nor an mpirun of it is on the PATH";
        }
    }

    /** What a launch left: its exit status ({@code -1} if it was killed at the timeout), output and duration. */
    public record Result(int exitCode, String output, Duration elapsed) {
        public boolean timedOut() {
            return exitCode == -1;
        }
    }

    private Mpirun() {
    }

    /** Open MPI's launcher, if installed. */
    static Optional<Path> find() {
        return Flavor.OPEN_MPI.launcher();
    }

    private static Optional<Path> onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static String versionOf(Path launcher) {
        try {
            Process p = new ProcessBuilder(launcher.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Runs {@code mainClass} on {@code ranks} MPI ranks. */
    static Result run(int ranks, Duration timeout, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return run(ranks, timeout, Map.of(), mainClass, args);
    }

    /** Runs {@code mainClass} on {@code ranks} Open MPI ranks with {@code env} added to the environment. */
    static Result run(int ranks, Duration timeout, Map<String, String> env, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return run(Flavor.OPEN_MPI, ranks, timeout, env, mainClass, args);
    }

    /** Runs {@code mainClass} on {@code ranks} ranks of {@code flavor} with {@code env} added to the environment. */
    static Result run(Flavor flavor, int ranks, Duration timeout, Map<String, String> env, Class<?> mainClass,
                      String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(flavor.launcher().orElseThrow().toString()));
        Map<String, String> all = new HashMap<>(env);
        if (flavor == Flavor.OPEN_MPI) {
            cmd.addAll(List.of("--allow-run-as-root", "--oversubscribe", "--bind-to", "none"));
            all.put("OMPI_MCA_btl", "self,vader");
            all.put("OMPI_MCA_rmaps_base_oversubscribe", "1");
        }
        cmd.addAll(List.of("-np", Integer.toString(ranks)));
        cmd.addAll(java(mainClass, args));
        return launch(cmd, timeout, all);
    }

    /** The JVM flags of every rank, as bin/weft passes them (less the agent, which Weft attaches itself). */
    public static final List<String> JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED", "--add-modules",
            "jdk.incubator.vector", "-XX:+EnableDynamicAgentLoading", "-Dnet.bytebuddy.safe=true", "-Xss8m",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    /** Runs {@code mainClass} in a plain JVM, with no MPI launcher around it. */
    public static Result plain(Duration timeout, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return plain(timeout, JVM_FLAGS, mainClass, args);
    }

    /** Runs {@code mainClass} in a plain JVM started with {@code jvmFlags} instead of {@link #JVM_FLAGS}. */
    public static Result plain(Duration timeout, List<String> jvmFlags, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return plain(timeout, jvmFlags, Map.of(), mainClass, args);
    }

    /** Runs {@code mainClass} in a plain JVM started with {@code jvmFlags}, with {@code env} added. */
    public static Result plain(Duration timeout, List<String> jvmFlags, Map<String, String> env, Class<?> mainClass,
                               String... args) throws IOException, InterruptedException {
        return launch(java(jvmFlags, mainClass, args), timeout, env);
    }

    private static List<String> java(Class<?> mainClass, String... args) {
        return java(JVM_FLAGS, mainClass, args);
    }

    private static List<String> java(List<String> jvmFlags, Class<?> mainClass, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
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
