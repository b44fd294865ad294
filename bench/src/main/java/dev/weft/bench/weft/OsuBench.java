package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@code bin/weft bench osu}: one routine ({@link OsuRoutine}) at message sizes from MIN_BYTES to MAX_BYTES in
 * powers of 4, as the OSU micro-benchmarks time them. Usage:
 * {@code ROUTINE MIN_BYTES MAX_BYTES SAMPLE_MICROS REPS WARMUP FIRST_WARMUP [C_LIBRARY]}.
 *
 * <p>At each size, {@link #iterations} calls make a sample of about SAMPLE_MICROS, timed three ways in turn in
 * every repetition (the order rotating), the ranks entering each together: {@code [B fori]}, one compiled program
 * calling the routine that many times in a {@code Weft.fori} ({@link #loop}); {@code [B call]}, a compiled program
 * of one call ({@link #once}) called that many times from Java, each result dropped; and, under MPI with C_LIBRARY
 * ({@code bench/c/osu.c} built as a shared library), {@code [B C]}, the same MPI call in a C loop, in this job on
 * the same rank placement. Each size first times the first call of {@link #once} ({@code [B first]}: trace,
 * lower, compile or load from the persistent compile cache, run) and then C's first call at that size
 * ({@code [B C first]}); WARMUP untimed repetitions (FIRST_WARMUP at the first size, while the JIT compiles the
 * call path) precede REPS timed ones. Samples are seconds per call; each series' check is the sum over the ranks of
 * each rank's result. The program's own sample is the whole sweep's seconds.
 */
public final class OsuBench {
    /** Fewest calls per sample: a fori of one call would time no loop. */
    public static final int MIN_ITERATIONS = 4;
    static final int MAX_ITERATIONS = 100_000;

    private OsuBench() {
    }

    /** {@code iters} calls of {@code routine} in one compiled loop (the first before it, to carry its result). */
    @Compile
    static Tensor loop(Comm comm, Tensor x, OsuRoutine routine, int iters) {
        Tensor first = routine.apply(comm, x);
        return Weft.fori(1, iters, first, (i, previous) -> routine.apply(comm, x));
    }

    /** One call of {@code routine}. */
    @Compile
    static Tensor once(Comm comm, Tensor x, OsuRoutine routine) {
        return routine.apply(comm, x);
    }

    /**
     * Calls per sample of about {@code sampleMicros} at {@code bytes}, from the slowest way's time per call: the
     * least of three trials of Weft's single call (each of a guess at a twentieth of a sample: 0.5 µs plus 3 GB/s per
     * call), the most over the ranks, so that all make the same calls; within [{@link #MIN_ITERATIONS},
     * {@link #MAX_ITERATIONS}]. Measured rather than guessed: on a loaded machine a call can take a thousand times
     * its idle time, and a guess would then make the sweep take hours.
     */
    static int iterations(Comm world, OsuRoutine routine, Tensor x, long bytes, long sampleMicros) {
        int trial = (int) Math.max(1, Math.round(sampleMicros / 20.0 / (0.5 + bytes / 3000.0)));
        double least = Double.MAX_VALUE;
        for (int t = 0; t < 3; t++) {
            world.barrier();
            long start = System.nanoTime();
            for (int i = 0; i < trial; i++) {
                once(world, x, routine);
            }
            least = Math.min(least, Report.since(start) / trial);
        }
        double perCall = world.allreduce(Tensor.of(new double[] {least}, 1), ReduceOp.MAX).toDoubleArray()[0];
        return (int) Math.max(MIN_ITERATIONS, Math.min(MAX_ITERATIONS, Math.round(sampleMicros * 1e-6 / perCall)));
    }

    /** Rank {@code rank}'s input of {@code n} values: value i is rank + 1 + (i % 16) / 16, as in {@code osu.c}. */
    static float[] input(int rank, long n) {
        float[] v = new float[Math.toIntExact(n)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (rank + 1) + (i % 16) / 16f;
        }
        return v;
    }

    static void run(String[] args, PrintStream out) {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: OsuBench ROUTINE MIN_BYTES MAX_BYTES SAMPLE_MICROS REPS WARMUP"
                    + " FIRST_WARMUP [C_LIBRARY]");
        }
        OsuRoutine routine = OsuRoutine.of(args[0]);
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        long[] p = Report.args("OsuBench " + args[0], "MIN_BYTES MAX_BYTES SAMPLE_MICROS REPS WARMUP FIRST_WARMUP",
                rest);
        Path library = rest.length > 6 ? Path.of(rest[6]) : null;
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        long t0 = System.nanoTime();
        for (long bytes = Math.max(4, p[0]); bytes <= p[1]; bytes *= 4) {
            long warmup = bytes == Math.max(4, p[0]) ? p[5] : p[4];
            size(world, routine, bytes, p[2], p[3], warmup, library, report);
        }
        report.sample(Report.since(t0));
    }

    private static void size(Comm world, OsuRoutine routine, long bytes, long sampleMicros, long reps, long warmup,
                             Path library, Report report) {
        int rank = world.rank();
        int size = world.size();
        int count = Math.toIntExact(bytes / 4);
        long results = routine.resultCount(count, rank, size);
        float[] values = input(rank, routine.inputCount(count, size));
        Tensor x = Tensor.of(values, values.length);
        Report fori = report.alongside(bytes + " fori");
        Report call = report.alongside(bytes + " call");
        Report cReport = report.alongside(bytes + " C");
        try (COsuLoop c = library == null ? null : new COsuLoop(library, routine.cName(), values, count, results)) {
            world.barrier();
            long start = System.nanoTime();
            Tensor y = once(world, x, routine);
            report.alongside(bytes + " first").sample(Report.since(start));
            report.alongside(bytes + " first").check(globalSum(world, y));
            int iters = iterations(world, routine, x, bytes, sampleMicros);
            if (c != null) {
                report.alongside(bytes + " C first").sample(c.seconds(1));
                report.alongside(bytes + " C first").check(globalSum(world, c.sum(results)));
            }
            Tensor looped = y;
            for (long r = 0; r < warmup + reps; r++) {
                if (r == warmup) {
                    Report.settle();
                }
                for (int k = 0; k < 3; k++) {
                    switch ((int) ((r + k) % 3)) {
                        case 0 -> {
                            world.barrier();
                            start = System.nanoTime();
                            looped = loop(world, x, routine, iters);
                            double s = Report.since(start) / iters;
                            if (r >= warmup) {
                                fori.sample(s);
                            }
                        }
                        case 1 -> {
                            world.barrier();
                            start = System.nanoTime();
                            for (int i = 0; i < iters; i++) {
                                y = once(world, x, routine);
                            }
                            double s = Report.since(start) / iters;
                            if (r >= warmup) {
                                call.sample(s);
                            }
                        }
                        default -> {
                            if (c != null) {
                                double s = c.seconds(iters);
                                if (r >= warmup) {
                                    cReport.sample(s);
                                }
                            }
                        }
                    }
                }
            }
            fori.check(globalSum(world, looped));
            call.check(globalSum(world, y));
            if (c != null) {
                cReport.check(globalSum(world, c.sum(results)));
            }
            report.info(bytes + " B: " + iters + " calls per sample");
        }
    }

    private static double globalSum(Comm world, Tensor result) {
        double sum = 0;
        for (float v : result.toFloatArray()) {
            sum += v;
        }
        return globalSum(world, sum);
    }

    private static double globalSum(Comm world, double local) {
        return world.allreduce(Tensor.of(new double[] {local}, 1), ReduceOp.SUM).toDoubleArray()[0];
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
