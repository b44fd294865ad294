package dev.weft.bench;

import java.util.Locale;

/** How a case's samples (always seconds per unit of work) are shown. */
public enum Unit {
    /** Time per call, per allreduce or per compile: shown in s, ms, µs or ns. */
    TIME,
    /** Time per step of a simulation: shown as steps per second. */
    STEPS_PER_SECOND;

    /** {@code seconds} in this unit, with three significant digits. */
    public String format(double seconds) {
        if (this == STEPS_PER_SECOND) {
            return sig3(1 / seconds) + " steps/s";
        }
        double a = Math.abs(seconds);
        if (a >= 1) {
            return sig3(seconds) + " s";
        } else if (a >= 1e-3) {
            return sig3(seconds * 1e3) + " ms";
        } else if (a >= 1e-6) {
            return sig3(seconds * 1e6) + " µs";
        }
        return sig3(seconds * 1e9) + " ns";
    }

    /** The median with the range of the samples, in this unit: {@code 12.3 ms (12.1–13.0)}. */
    public String format(Measurement m) {
        String lo = format(this == STEPS_PER_SECOND ? m.max() : m.min());
        String hi = format(this == STEPS_PER_SECOND ? m.min() : m.max());
        String loUnit = lo.substring(lo.indexOf(' '));
        return format(m.median()) + " (" + (hi.endsWith(loUnit) ? lo.substring(0, lo.indexOf(' ')) : lo) + "–" + hi + ")";
    }

    private static String sig3(double v) {
        double a = Math.abs(v);
        String pattern = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f";
        return String.format(Locale.ROOT, pattern, v);
    }
}
