package dev.weft.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The programs the benchmarks run and the tools behind them: compiles the C references (gcc, and mpicc for the
 * MPI ones) into {@code bench/out/bin}, the MPI allreduce also as a shared library a Weft program calls, checks
 * the Python interpreter has NumPy (and mpi4py), and builds the command line of each C, Python and Weft program.
 * gcc, Python and NumPy are required; without mpicc/mpirun or mpi4py the MPI references are skipped with the
 * reason in the table.
 */
public final class Toolchain {
    private static final String WEFT_PROGRAMS = "dev.weft.bench.weft.";
    private static final String[] C_REFERENCES = {"chain", "stream"};
    private static final String[] MPI_C_REFERENCES = {"allreduce", "heat", "overlap"};
    /** MPI references also built as {@code lib<name>.so}, for a Weft program to time alongside its own work. */
    private static final String[] MPI_C_LIBRARIES = {"allreduce", "osu"};

    private final Path root;
    private final String python;
    private final Optional<String> noMpi;
    private final Optional<String> noMpi4py;
    private final Optional<String> noTorch;
    private final boolean weftOnMpi;
    private final Optional<String> noMpich;
    private final List<String> versions;

    private Toolchain(Path root, String python, Optional<String> noMpi, Optional<String> noMpi4py,
                      Optional<String> noTorch, boolean weftOnMpi, Optional<String> noMpich, List<String> versions) {
        this.root = root;
        this.python = python;
        this.noMpi = noMpi;
        this.noMpi4py = noMpi4py;
        this.noTorch = noTorch;
        this.weftOnMpi = weftOnMpi;
        this.noMpich = noMpich;
        this.versions = List.copyOf(versions);
    }

    /** Which communicator the Weft programs of the multi-rank cases run on. */
    public enum CommMode {
        /** MPI when {@code bin/weft run --comm mpi} runs a real MPI job, else fake ranks. */
        AUTO,
        FAKE,
        MPI
    }

    /**
     * Finds the tools and compiles the C references.
     *
     * @param root   the repository root (holds {@code bin/weft} and {@code bench/})
     * @param python the Python interpreter for the NumPy and mpi4py references
     * @param comm   the communicator for Weft's multi-rank programs
     * @param env    variables the MPI probe runs with (as every program will)
     * @throws BenchException if gcc, the interpreter or NumPy is missing, or a reference does not compile
     */
    public static Toolchain prepare(Path root, String python, CommMode comm, Map<String, String> env) {
        List<String> versions = new ArrayList<>();
        String gcc = output(List.of("gcc", "-dumpfullversion"))
                .orElseThrow(() -> new BenchException("gcc is missing: it compiles the C references "
                        + "(Debian: apt-get install gcc)"));
        versions.add("gcc " + gcc.strip());
        String py = output(List.of(python, "-c", "import sys, numpy; print(sys.version.split()[0], numpy.__version__)"))
                .orElseThrow(() -> new BenchException(python + " with NumPy is needed for the NumPy references "
                        + "(Debian: apt-get install python3-numpy; another interpreter: WEFT_PYTHON=/path/to/python)"))
                .strip();
        versions.add("Python " + py.replace(" ", ", NumPy ") + " (" + python + ")");
        Path bin = root.resolve("bench/out/bin");
        try {
            Files.createDirectories(bin);
        } catch (IOException e) {
            throw new BenchException("cannot create " + bin + ": " + e.getMessage());
        }
        for (String c : C_REFERENCES) {
            compile(root, "gcc", c);
        }
        Optional<String> noMpi = output(List.of("mpirun", "--version")).isEmpty()
                ? Optional.of("mpirun is missing (Debian: apt-get install openmpi-bin libopenmpi-dev)")
                : output(List.of("mpicc", "--version")).isEmpty()
                ? Optional.of("mpicc is missing (Debian: apt-get install libopenmpi-dev)") : Optional.empty();
        if (noMpi.isEmpty()) {
            for (String c : MPI_C_REFERENCES) {
                compile(root, "mpicc", c);
            }
            for (String c : MPI_C_LIBRARIES) {
                compileLibrary(root, "mpicc", c);
            }
            output(List.of("mpirun", "--version")).ifPresent(v -> versions.add(v.lines().findFirst().orElse("")));
        }
        // MPICH beside Open MPI (Debian names its tools mpicc.mpich, mpirun.mpich): the osu sweep's second MPI
        Optional<String> noMpich = output(List.of("mpirun.mpich", "--version")).isEmpty()
                || output(List.of("mpicc.mpich", "--version")).isEmpty()
                ? Optional.of("MPICH is missing (Debian: apt-get install mpich libmpich-dev)") : Optional.empty();
        if (noMpich.isEmpty()) {
            compileLibrary(root, "mpicc.mpich", "osu", library("osu-mpich"));
            output(List.of("mpirun.mpich", "--version")).flatMap(v -> v.lines().filter(l -> l.contains("Version:"))
                    .findFirst()).ifPresent(v -> versions.add("MPICH " + v.substring(v.indexOf(':') + 1).strip()));
        }
        Optional<String> noMpi4py = output(List.of(python, "-c", "import mpi4py")).isPresent() ? Optional.empty()
                : Optional.of(python + " cannot import mpi4py (Debian's python3: apt-get install python3-mpi4py; "
                        + "another: pip install mpi4py)");
        Optional<String> torch = output(List.of(python, "-c", "import torch; print(torch.__version__)"));
        torch.ifPresent(v -> versions.add("PyTorch " + v.strip()));
        Optional<String> noTorch = torch.isPresent() ? Optional.empty()
                : Optional.of("skipped: " + (python.equals("/usr/bin/python3") ? "python3-torch not installed (Debian: "
                        + "apt-get install python3-torch)" : python + " cannot import torch"));
        boolean weftOnMpi = switch (comm) {
            case FAKE -> false;
            case MPI -> true;
            case AUTO -> exec(weftCommand(root, 2, true, null, "MpiProbe", List.of(2)), env).ok();
        };
        return new Toolchain(root, python, noMpi, noMpi4py, noTorch, weftOnMpi, noMpich, versions);
    }

    /** Tool versions for the report header. */
    public List<String> versions() {
        return versions;
    }

    /** Whether Weft's multi-rank programs run under MPI (else on fake ranks). */
    public boolean weftOnMpi() {
        return weftOnMpi;
    }

    /** Why the MPI C references cannot run, if they cannot. */
    public Optional<String> noMpi() {
        return noMpi;
    }

    /** Why the MPICH runs (the osu sweep's second MPI) cannot run, if they cannot. */
    public Optional<String> noMpich() {
        return noMpich;
    }

    /** Why the mpi4py references cannot run, if they cannot. */
    public Optional<String> noMpi4py() {
        return noMpi4py.or(() -> noMpi);
    }

    /** Why the PyTorch references cannot run, if they cannot. */
    public Optional<String> noTorch() {
        return noTorch;
    }

    /** Directory {@code name} under {@code bench/out}, where the programs' generated inputs go. */
    public Path out(String name) {
        return root.resolve("bench/out").resolve(name);
    }

    public List<String> c(String program, Object... args) {
        return with(List.of(bin(program)), args);
    }

    public List<String> mpiC(int ranks, String program, Object... args) {
        return with(mpirun(ranks, bin(program)), args);
    }

    /** The path of the shared library built from MPI reference {@code name} (see {@link #noMpi}). */
    public String mpiLibrary(String name) {
        return bin(library(name));
    }

    /** The path of the shared library built from MPI reference {@code name} with MPICH (see {@link #noMpich}). */
    public String mpichLibrary(String name) {
        return bin(library(name + "-mpich"));
    }

    public List<String> python(String script, Object... args) {
        return with(List.of(python, script(script)), args);
    }

    public List<String> mpiPython(int ranks, String script, Object... args) {
        return with(mpirun(ranks, python, script(script)), args);
    }

    /** A Weft benchmark program (a class of {@code dev.weft.bench.weft}) run by {@code bin/weft run} on RANKS ranks. */
    public List<String> weft(int ranks, String program, Object... args) {
        return weftCommand(root, ranks, ranks > 1 && weftOnMpi, null, program, List.of(args));
    }

    /** A Weft benchmark program run by {@code bin/weft run --mpi mpich} on RANKS ranks (see {@link #noMpich}). */
    public List<String> weftOnMpich(int ranks, String program, Object... args) {
        return weftCommand(root, ranks, true, "mpich", program, List.of(args));
    }

    /** A Weft benchmark program on RANKS fake ranks (threads of one JVM), whatever the MPI installed. */
    public List<String> weftFake(int ranks, String program, Object... args) {
        return weftCommand(root, ranks, false, null, program, List.of(args));
    }

    /** {@code bin/weft run}; {@code implementation} names the MPI ({@code --mpi}), null for the default. */
    private static List<String> weftCommand(Path root, int ranks, boolean mpi, String implementation, String program,
                                            List<Object> args) {
        List<String> cmd = new ArrayList<>(List.of(root.resolve("bin/weft").toString(), "run"));
        if (implementation != null) {
            cmd.addAll(List.of("--mpi", implementation));
        }
        cmd.addAll(List.of("-np", Integer.toString(ranks), "--comm", mpi ? "mpi" : "fake", "-cp",
                root.resolve("bench/target/classes").toString(), WEFT_PROGRAMS + program));
        args.forEach(a -> cmd.add(a.toString()));
        return cmd;
    }

    private static List<String> mpirun(int ranks, String... program) {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "-np", Integer.toString(ranks)));
        if (Runtime.getRuntime().availableProcessors() < ranks) {
            cmd.add("--oversubscribe");
        }
        cmd.addAll(List.of(program));
        return cmd;
    }

    /** The file name of the shared library built from C reference {@code name}. */
    private static String library(String name) {
        return "lib" + name + ".so";
    }

    private String bin(String program) {
        return root.resolve("bench/out/bin").resolve(program).toString();
    }

    private String script(String name) {
        return root.resolve("bench/python").resolve(name + ".py").toString();
    }

    private static List<String> with(List<String> command, Object... args) {
        List<String> cmd = new ArrayList<>(command);
        for (Object a : args) {
            cmd.add(a.toString());
        }
        return cmd;
    }

    private static void compile(Path root, String compiler, String name) {
        Path src = root.resolve("bench/c").resolve(name + ".c");
        Path exe = root.resolve("bench/out/bin").resolve(name);
        run(src, List.of(compiler, "-O3", "-march=native", "-Wall", "-o", exe.toString(), src.toString(), "-lm"));
    }

    private static void compileLibrary(Path root, String compiler, String name) {
        compileLibrary(root, compiler, name, library(name));
    }

    private static void compileLibrary(Path root, String compiler, String name, String file) {
        Path src = root.resolve("bench/c").resolve(name + ".c");
        Path lib = root.resolve("bench/out/bin").resolve(file);
        run(src, List.of(compiler, "-O3", "-march=native", "-Wall", "-shared", "-fPIC", "-o", lib.toString(),
                src.toString(), "-lm"));
    }

    private static void run(Path src, List<String> cmd) {
        Exec e = exec(cmd, Map.of());
        if (!e.ok()) {
            throw new BenchException("cannot compile " + src + " with: " + String.join(" ", cmd) + "\n" + e.text());
        }
    }

    /** What a command printed (stdout and stderr together) and whether it exited 0. */
    private record Exec(boolean ok, String text) {
    }

    private static Exec exec(List<String> command, Map<String, String> env) {
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().putAll(env);
            Process p = pb.start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Exec(p.waitFor(300, TimeUnit.SECONDS) && p.exitValue() == 0, text);
        } catch (IOException e) {
            return new Exec(false, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Exec(false, "interrupted");
        }
    }

    /** The output of a command that exits 0, or empty when it cannot start or fails. */
    private static Optional<String> output(List<String> command) {
        Exec e = exec(command, Map.of());
        return e.ok() ? Optional.of(e.text()) : Optional.empty();
    }
}
