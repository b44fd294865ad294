package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Scope;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Case 8: a user's loop that calls case 1's compiled chain on the same f32[N] input and drops each result, timed
 * call by call. Usage: {@code MODE N REPS WARMUP} with MODE {@code plain} ({@code y = chain(x)}: the dropped
 * results wait for the garbage collector), {@code scope} (each call in a {@code Weft.scope()}, which frees its
 * result at close; the sample includes the close) or {@code donate} ({@code y = chainInto(x, y.donate())}: each
 * call writes its result into the previous one's buffer).
 *
 * <p>First REPS calls right after the first (compiling) call, cold (no warm-up, no collection before them), then WARMUP
 * calls and REPS calls, warm: the samples are the warm calls. No explicit collection comes between them, unlike the
 * other cases: one would return every dropped buffer at once, more than one pacing collection's pool holds, and the
 * loop would map fresh ones. Info lines give, for each series, median, p90 and mean with their ratios to the median,
 * the collections during it (young ones, pauses of concurrent cycles, full ones), and the process's resident memory
 * (peak and now). The check is the f64 sum of the last result.
 */
public final class FreshLoopBench {
    private FreshLoopBench() {
    }

    @Compile
    static Tensor chain(Tensor x) {
        return ChainBench.chain(x);
    }

    /** {@link #chain} that may take the buffer of {@code previous}, which it does not read, for its result. */
    @Compile
    static Tensor chainInto(Tensor x, Tensor previous) {
        return ChainBench.chain(x);
    }

    /**
     * The loop of one MODE: REPS calls, each timed into {@code samples} unless it is null. {@code last[0]} holds the
     * previous result and takes each new one, as a user's {@code y = chain(x)} does, so that no other reference keeps
     * an earlier result alive (in a scope it keeps its value unless {@code keepLast}, so that the series before the
     * last leave no result for the garbage collector).
     */
    private static void loop(String mode, Tensor x, Tensor[] last, long reps, double[] samples, boolean keepLast) {
        for (int r = 0; r < reps; r++) {
            long t0 = System.nanoTime();
            switch (mode) {
                case "plain" -> last[0] = chain(x);
                case "donate" -> last[0] = chainInto(x, last[0].donate());
                case "scope" -> {
                    try (Scope s = Weft.scope()) {
                        Tensor z = chain(x);
                        if (keepLast && r == reps - 1) {
                            last[0] = s.keep(z);
                        }
                    }
                }
                default -> throw new IllegalArgumentException("MODE is plain, scope or donate, got " + mode);
            }
            if (samples != null) {
                samples[r] = Report.since(t0);
            }
        }
    }

    static void run(String[] args, PrintStream out) {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: FreshLoopBench MODE N REPS WARMUP");
        }
        String mode = args[0];
        long[] a = Report.args("FreshLoopBench " + mode, "N REPS WARMUP", Arrays.copyOfRange(args, 1, args.length));
        Report report = new Report(out, true);
        int n = Math.toIntExact(a[0]);
        int reps = Math.toIntExact(a[1]);
        Tensor x = Tensor.of(ChainBench.input(n), n);
        Tensor[] y = {mode.equals("donate") ? chainInto(x, x.mul(1)) : chain(x)};
        double[] cold = new double[reps];
        long[] gc = collections();
        loop(mode, x, y, reps, cold, false);
        report.info("cold (the " + reps + " calls after the compiling one): " + summary(cold, gc));
        loop(mode, x, y, a[2], null, false);
        double[] warm = new double[reps];
        gc = collections();
        loop(mode, x, y, reps, warm, true);
        report.info("warm: " + summary(warm, gc) + "; " + residentMemory());
        for (double s : warm) {
            report.sample(s);
        }
        double sum = 0;
        for (float v : y[0].toFloatArray()) {
            sum += v;
        }
        report.check(sum);
    }

    /** Median, p90 and mean (with their ratios to the median) and the collections since {@code gcBefore}. */
    private static String summary(double[] samples, long[] gcBefore) {
        double[] s = samples.clone();
        Arrays.sort(s);
        double median = Report.median(s);
        double p90 = s[(int) Math.ceil(0.9 * s.length) - 1];
        double mean = Arrays.stream(s).average().orElseThrow();
        long[] gc = collections();
        return String.format(Locale.ROOT, "median %.2f ms, p90 %.2f ms (%.2fx median), mean %.2f ms (%.2fx median),"
                + " %d young collections, %d concurrent-cycle pauses, %d full", median * 1e3, p90 * 1e3, p90 / median,
                mean * 1e3, mean / median, gc[0] - gcBefore[0], gc[1] - gcBefore[1], gc[2] - gcBefore[2]);
    }

    /**
     * Collections so far: young ones (a collection Weft asks for with {@code -XX:+ExplicitGCInvokesConcurrent} is
     * one, which starts a concurrent cycle), the pauses of concurrent cycles (G1's remark and cleanup: two per
     * cycle) and those of the collectors that stop the world for the whole heap.
     */
    private static long[] collections() {
        long young = 0;
        long concurrent = 0;
        long full = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            long c = Math.max(0, b.getCollectionCount());
            if (b.getName().contains("Old") || b.getName().contains("MarkSweep")) {
                full += c;
            } else if (b.getName().contains("Concurrent")) {
                concurrent += c;
            } else {
                young += c;
            }
        }
        return new long[] {young, concurrent, full};
    }

    private static String residentMemory() {
        List<String> status;
        try {
            status = Files.readAllLines(Path.of("/proc/self/status"));
        } catch (IOException e) {
            return "resident memory unknown (" + e.getMessage() + ")";
        }
        String peak = "?";
        String now = "?";
        for (String line : status) {
            if (line.startsWith("VmHWM:")) {
                peak = mib(line);
            } else if (line.startsWith("VmRSS:")) {
                now = mib(line);
            }
        }
        return "resident memory peak " + peak + " MiB, now " + now + " MiB (with the 1 GiB pre-touched heap)";
    }

    private static String mib(String statusLine) {
        return Long.toString(Long.parseLong(statusLine.replaceAll("[^0-9]", "")) / 1024);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
