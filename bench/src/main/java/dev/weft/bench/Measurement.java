package dev.weft.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalDouble;

/**
 * The output of one benchmark program run: its samples (seconds per unit of work, one per timed repetition), its
 * check value (a number every implementation of the case must agree on), and its info lines.
 */
public record Measurement(double[] samples, OptionalDouble check, List<String> info) implements Outcome {
    public Measurement {
        if (samples.length == 0) {
            throw new IllegalArgumentException("a measurement needs at least one sample");
        }
        samples = samples.clone();
        info = List.copyOf(info);
    }

    /**
     * Reads the protocol every benchmark program prints: {@code sample <seconds>}, {@code check <value>},
     * {@code info <text>}, one per line; other lines are ignored.
     *
     * @throws IllegalArgumentException if there is no sample line, or a sample or check is not a number
     */
    public static Measurement parse(String output) {
        List<Double> samples = new ArrayList<>();
        OptionalDouble check = OptionalDouble.empty();
        List<String> info = new ArrayList<>();
        for (String line : output.lines().toList()) {
            if (line.startsWith("sample ")) {
                samples.add(Double.parseDouble(line.substring(7).trim()));
            } else if (line.startsWith("check ")) {
                check = OptionalDouble.of(Double.parseDouble(line.substring(6).trim()));
            } else if (line.startsWith("info ")) {
                info.add(line.substring(5).trim());
            }
        }
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no 'sample' line in the program's output");
        }
        return new Measurement(samples.stream().mapToDouble(Double::doubleValue).toArray(), check, info);
    }

    /** The median sample (the mean of the middle two for an even count). */
    public double median() {
        double[] s = sorted();
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    public double min() {
        return sorted()[0];
    }

    public double max() {
        return sorted()[samples.length - 1];
    }

    private double[] sorted() {
        double[] s = samples.clone();
        Arrays.sort(s);
        return s;
    }
}
