package dev.weft.bench.weft;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * What a benchmark program tells the driver, one line each: {@code sample <seconds per unit>} per timed
 * repetition, {@code check <value>} (a number every implementation of the case must agree on) and
 * {@code info <text>}; a reference timed in the same process prints the same lines prefixed with {@code [name] }.
 * Only the reporting rank speaks, so a multi-rank run prints each line once.
 */
public final class Report {
    /** Options of every JVM the benchmark starts, the harness's and these programs' own children alike. */
    public static final String JVM_OPTIONS = "-Xms1g -Xmx1g -XX:+AlwaysPreTouch";

    private final PrintStream out;
    private final boolean speaks;
    private final String prefix;

    Report(PrintStream out, boolean speaks) {
        this(out, speaks, "");
    }

    private Report(PrintStream out, boolean speaks, String prefix) {
        this.out = out;
        this.speaks = speaks;
        this.prefix = prefix;
    }

    /** The report of reference {@code name}, timed alongside this program's own work. */
    Report alongside(String name) {
        return new Report(out, speaks, "[" + name + "] ");
    }

    void sample(double seconds) {
        line("sample " + seconds);
    }

    void check(double value) {
        line("check " + value);
    }

    void info(String text) {
        line("info " + text);
    }

    private void line(String s) {
        if (speaks) {
            out.println(prefix + s);
        }
    }

    /** The median of {@code sorted}, samples in ascending order (the mean of the middle two for an even count). */
    public static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /**
     * The integer arguments named by {@code usage} (space-separated). Every program's last two are REPS (timed
     * repetitions, at least 1) and WARMUP (untimed ones before them, at least 1: the first call compiles).
     */
    static long[] args(String program, String usage, String[] args) {
        String[] names = usage.split(" ");
        if (args.length < names.length) {
            throw new IllegalArgumentException("usage: " + program + " " + usage + "; got " + Arrays.toString(args));
        }
        long[] values = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            values[i] = Long.parseLong(args[i]);
            if (values[i] < 1) {
                throw new IllegalArgumentException(names[i] + " must be at least 1, got " + args[i]);
            }
        }
        return values;
    }

    /**
     * Collects the garbage of compiling and warming up before the timed repetitions, so that the first of them does
     * not pay for the young collection it would otherwise trigger (~20 ms, in lockstep across ranks); JMH's
     * {@code -gc true} does the same. Collections that the timed work itself causes still land in its samples.
     */
    static void settle() {
        System.gc();
    }

    /** Seconds since {@code t0}, a {@link System#nanoTime()} reading. */
    static double since(long t0) {
        return (System.nanoTime() - t0) * 1e-9;
    }
}
