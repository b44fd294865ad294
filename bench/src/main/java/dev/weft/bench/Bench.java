package dev.weft.bench;

import dev.weft.bench.weft.Report;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * {@code bin/weft bench [--quick] [--comm auto|fake|mpi] [CASE...]}: runs the benchmark cases (all by default)
 * and prints a Markdown table of Weft against its references, also written to {@code bench/out/latest.md} and, for
 * a full run of every case, to {@code docs/benchmarks.md} ({@link BenchmarksPage}); a full-size run of case
 * {@code train} alone writes its own section of that page.
 * {@code bin/weft bench osu [--quick] [--comm auto|fake|mpi] [ROUTINE...]} runs the collectives by message size
 * instead ({@link OsuSweep}, {@link OsuTable}): to {@code bench/out/osu.md} and, for a full sweep of every routine,
 * to its section of {@code docs/benchmarks.md}.
 * The Python interpreter is {@code $WEFT_PYTHON}, else {@code /usr/bin/python3} (where Debian's python3-numpy and
 * python3-mpi4py live), else {@code python3}. Exit status: 2 when the benchmarks cannot run (a required tool is
 * missing), 1 when a Weft program failed or disagreed with a reference, else 0.
 */
public final class Bench {
    static final String JVM_OPTIONS = Report.JVM_OPTIONS;
    private static final String USAGE = "usage: weft bench [--quick] [--comm auto|fake|mpi] [CASE...]; cases: "
            + String.join(" ", Cases.NAMES);
    private static final String OSU_USAGE = "usage: weft bench osu [--quick] [--comm auto|fake|mpi]"
            + " [--mpi openmpi|mpich] [ROUTINE...] (without --mpi: Open MPI, then MPICH where installed);"
            + " routines: " + String.join(" ", OsuSweep.ROUTINES);

    private Bench() {
    }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(System.getProperty("weft.root", ".")).toAbsolutePath().normalize();
        boolean osu = args.length > 0 && args[0].equals("osu");
        List<String> names = osu ? OsuSweep.ROUTINES : Cases.NAMES;
        String usage = osu ? OSU_USAGE : USAGE;
        boolean quick = false;
        Toolchain.CommMode comm = Toolchain.CommMode.AUTO;
        List<OsuSweep.Mpi> mpis = new ArrayList<>();
        List<String> cases = new ArrayList<>();
        for (int i = osu ? 1 : 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--comm" -> comm = i + 1 < args.length ? parseComm(args[++i]) : fail(usage);
                case "--mpi" -> mpis.add(osu && i + 1 < args.length ? parseMpi(args[++i]) : fail(usage));
                case "-h", "--help" -> {
                    System.out.println(usage);
                    return;
                }
                default -> {
                    if (!names.contains(args[i])) {
                        fail("unknown " + (osu ? "routine" : "case") + " or option " + args[i] + "\n" + usage);
                    }
                    cases.add(args[i]);
                }
            }
        }
        if (cases.isEmpty()) {
            cases.addAll(names);
        }
        Map<String, String> env = new HashMap<>();
        // Fake ranks stop a world after 120 s by default; a full-size case may take longer on a slow machine.
        // A fixed, pre-touched heap: on a VM the first touch of each new heap page costs microseconds, which
        // would otherwise land in whichever sample the collector first grows the young generation into.
        String toolOptions = System.getenv().getOrDefault("JAVA_TOOL_OPTIONS", "");
        env.put("JAVA_TOOL_OPTIONS", (toolOptions + " " + JVM_OPTIONS + " -Dweft.fake.timeout=1800").strip());
        if ("root".equals(System.getProperty("user.name"))) {
            env.put("OMPI_ALLOW_RUN_AS_ROOT", "1");
            env.put("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        String loadBefore = loadAverage();
        Toolchain tools;
        try {
            tools = Toolchain.prepare(root, python(), comm, env);
        } catch (BenchException e) {
            System.err.println("weft bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        Runner runner = new Runner(root, env, 1800);
        Function<List<String>, Outcome> run = command -> {
            System.err.println("weft bench: " + String.join(" ", command).replace(root + "/", ""));
            return runner.run(command);
        };
        boolean whole = !quick && cases.equals(names);
        if (mpis.isEmpty()) {
            // fake ranks have no MPI to name; a machine without MPICH gets its rows only when asked for them
            mpis.add(OsuSweep.Mpi.OPENMPI);
            if (tools.weftOnMpi() && tools.noMpich().isEmpty()) {
                mpis.add(OsuSweep.Mpi.MPICH);
            }
        }
        boolean failed = osu ? osu(root, tools, run, quick, cases, mpis, whole, loadBefore)
                : cases(root, tools, run, quick, cases, whole, loadBefore);
        System.exit(failed ? 1 : 0);
    }

    /** Runs the cases, prints and writes their table; whether a Weft program failed or disagreed. */
    private static boolean cases(Path root, Toolchain tools, Function<List<String>, Outcome> run, boolean quick,
                                 List<String> cases, boolean whole, String loadBefore) throws IOException {
        Cases.Sizes sizes = quick ? Cases.Sizes.QUICK : Cases.Sizes.FULL;
        Cases all = new Cases(tools, run, sizes);
        List<Row> rows = new ArrayList<>();
        for (String c : cases) {
            rows.addAll(all.run(c));
        }
        String report = header(quick, sizes, tools, loadBefore, cases) + "\n" + MarkdownTable.render(rows);
        System.out.print(report);
        write(root, "bench/out/latest.md", report);
        if (whole) {
            System.err.println("weft bench: written to " + root.relativize(BenchmarksPage.write(root, report)));
        } else if (!quick && cases.equals(List.of("train"))) {
            System.err.println("weft bench: written to " + root.relativize(
                    BenchmarksPage.writeSection(root, BenchmarksPage.Section.TRAIN, report)) + ", its train section");
        } else {
            System.err.println("weft bench: " + BenchmarksPage.PATH + " left as it was (only a full run of every case,"
                    + " or of train alone, writes it)");
        }
        return rows.stream().anyMatch(r -> !(r.weft() instanceof Measurement) || r.checkMismatch().isPresent());
    }

    /** Runs the osu sweep, prints and writes its tables; whether a Weft program failed or disagreed. */
    private static boolean osu(Path root, Toolchain tools, Function<List<String>, Outcome> run, boolean quick,
                               List<String> routines, List<OsuSweep.Mpi> mpis, boolean whole, String loadBefore)
            throws IOException {
        OsuSweep.Settings settings = quick ? OsuSweep.Settings.QUICK : OsuSweep.Settings.FULL;
        OsuSweep sweep = new OsuSweep(tools, run, settings);
        List<OsuRow> rows = new ArrayList<>();
        for (OsuSweep.Mpi mpi : mpis) {
            for (String r : routines) {
                rows.addAll(sweep.run(r, mpi));
            }
        }
        String report = osuHeader(quick, settings, tools, loadBefore) + "\n" + OsuTable.render(rows);
        System.out.print(report);
        write(root, "bench/out/osu.md", report);
        if (whole) {
            System.err.println("weft bench: written to " + root.relativize(BenchmarksPage.writeOsu(root, report)));
        } else {
            System.err.println("weft bench: " + BenchmarksPage.PATH + " left as it was (only a full sweep of every"
                    + " routine writes its section)");
        }
        return rows.stream().anyMatch(r -> !r.weftRan() || !r.mismatches().isEmpty());
    }

    private static void write(Path root, String path, String report) throws IOException {
        Path out = root.resolve(path);
        Files.createDirectories(out.getParent());
        Files.writeString(out, report);
        System.err.println("weft bench: written to " + root.relativize(out));
    }

    private static String header(boolean quick, Cases.Sizes sizes, Toolchain tools, String loadBefore,
                                 List<String> cases) throws IOException {
        String programs = cases.equals(List.of("train")) ? "" : String.format(Locale.ROOT, "- every program: %d"
                + " warm-up (chain, matmul, dispatch, allreduce 8 MiB, mpi4py's Heat: %d; allreduce 8 B, Heat: %d) then"
                + " %d timed repetitions; shown: median (min–max)%n", sizes.warmup(),
                Cases.LONG_WARMUP_FACTOR * sizes.warmup(),
                Cases.JIT_WARMUP_FACTOR * Cases.LONG_WARMUP_FACTOR * sizes.warmup(), sizes.reps());
        String train = !cases.contains("train") ? "" : String.format(Locale.ROOT, "- train: %d steps per run, each"
                + " timed on rank 0 (from the call to the loss read back), no warm-up; steady: the median (min–max)"
                + " of the second half; steps 2–%d: their median (min–max); steps until steady: the first step within"
                + " %.1fx of the steady median; one run per configuration, Weft then PyTorch%n", sizes.trainSteps(),
                StepSeries.EARLY_END, StepSeries.STEADY_FACTOR);
        return String.format(Locale.ROOT, """
                Weft benchmarks, %s (%s)
                
                - machine: %s, %s, %d hardware threads; load average (1/5/15 min) %s before, %s after
                - %s; %s
                %s%s- every JVM: %s
                - multi-rank Weft programs on %s
                """,
                ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")),
                quick ? "--quick: small sizes, provisional" : "full sizes",
                InetAddress.getLocalHost().getHostName(), cpuModel(), Runtime.getRuntime().availableProcessors(),
                loadBefore, loadAverage(), "Java " + System.getProperty("java.vm.version"),
                String.join("; ", tools.versions()), programs, train, JVM_OPTIONS,
                tools.weftOnMpi() ? "MPI (bin/weft run --comm mpi)" : "fake ranks (bin/weft run --comm fake)");
    }

    private static String osuHeader(boolean quick, OsuSweep.Settings s, Toolchain tools, String loadBefore)
            throws IOException {
        return String.format(Locale.ROOT, """
                Collectives by message size (bin/weft bench osu), %s (%s)

                - machine: %s, %s, %d hardware threads; load average (1/5/15 min) %s before, %s after
                - %s; %s
                - %d ranks, Weft on %s; one job per routine; every JVM: %s
                - per size: calls per sample for about %d ms (measured: the least of three short trials of \
                Weft's single call, at least %d), %d warm-up repetitions (%d at the first size) then %d timed; shown: median (min–max) µs per call over the \
                repetitions
                - C: the MPI call in a C loop (bench/c/osu.c, mpicc -O3; under MPICH, MPICH's mpicc), loaded into \
                Weft's job as a shared library and timed in turn with Weft's two loops in every repetition (same rank \
                placement)
                - Weft fori: one `@Compile` method calling the routine N times in `Weft.fori` (µs per call = sample / \
                N): a collective inside a compiled program. Weft call: a `@Compile` method of one call, called N \
                times from a Java loop, each result dropped: what a compiled step called from Java pays, dispatch \
                included
                - ratio: Weft time / C time, above 1: Weft slower; **bold**: over %s
                - first call: Weft's single-call program traced, lowered, compiled (or loaded from the persistent \
                compile cache) and run, against C's first MPI call at that size
                - message size as in the OSU micro-benchmarks: what each rank sends (alltoall: to each rank; \
                scatter: what each rank gets); f32 values, roots rank 0, SUM, sendrecv to the next rank, \
                iallreduce waited at once
                """,
                ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")),
                quick ? "--quick: short samples, provisional" : "full",
                InetAddress.getLocalHost().getHostName(), cpuModel(), Runtime.getRuntime().availableProcessors(),
                loadBefore, loadAverage(), "Java " + System.getProperty("java.vm.version"),
                String.join("; ", tools.versions()), OsuSweep.RANKS,
                tools.weftOnMpi() ? "MPI (bin/weft run --comm mpi)" : "fake ranks (bin/weft run --comm fake)",
                JVM_OPTIONS, s.sampleMicros() / 1000, dev.weft.bench.weft.OsuBench.MIN_ITERATIONS, s.warmup(),
                s.firstWarmup(), s.reps(), OsuTable.TARGET);
    }

    private static String python() {
        String env = System.getenv("WEFT_PYTHON");
        if (env != null && !env.isBlank()) {
            return env;
        }
        return Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
    }

    private static String loadAverage() throws IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + "/" + f[1] + "/" + f[2];
    }

    private static String cpuModel() throws IOException {
        return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("unknown CPU");
    }

    private static OsuSweep.Mpi parseMpi(String s) {
        try {
            return OsuSweep.Mpi.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return fail("--mpi is openmpi or mpich, got " + s);
        }
    }

    private static Toolchain.CommMode parseComm(String s) {
        try {
            return Toolchain.CommMode.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return fail("--comm is auto, fake or mpi, got " + s);
        }
    }

    private static <T> T fail(String message) {
        System.err.println("weft bench: " + message);
        System.exit(2);
        throw new IllegalStateException("unreachable");
    }
}
