package dev.weft.bench;

import dev.weft.bench.weft.Report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The output of one benchmark program run: its samples (seconds per unit of work, one per timed repetition), its
 * check value (a number every implementation of the case must agree on), its info lines, and the measurements of
 * the references it timed alongside itself in the same process, by name.
 */
public record Measurement(double[] samples, OptionalDouble check, List<String> info,
                          Map<String, Measurement> alongside) implements Outcome {
    /** A line of a series measured alongside: {@code [name] } followed by a line of the protocol. */
    private static final Pattern ALONGSIDE = Pattern.compile("\\[([^]]+)] (.*)");

    public Measurement {
        if (samples.length == 0) {
            throw new IllegalArgumentException("a measurement needs at least one sample");
        }
        samples = samples.clone();
        info = List.copyOf(info);
        alongside = Collections.unmodifiableMap(new LinkedHashMap<>(alongside));
    }

    /**
     * Reads the protocol every benchmark program prints: {@code sample <seconds>}, {@code check <value>},
     * {@code info <text>}, one per line; the same lines prefixed with {@code [name] } belong to the measurement
     * {@code name} timed alongside (a reference run sample by sample in turn with the program's own work); other
     * lines are ignored.
     *
     * @throws IllegalArgumentException if there is no sample line (for the program or a series alongside), or a
     *                                  sample or check is not a number
     */
    public static Measurement parse(String output) {
        Map<String, StringBuilder> series = new LinkedHashMap<>();
        StringBuilder own = new StringBuilder();
        for (String line : output.lines().toList()) {
            Matcher m = ALONGSIDE.matcher(line);
            if (m.matches()) {
                series.computeIfAbsent(m.group(1), k -> new StringBuilder()).append(m.group(2)).append('\n');
            } else {
                own.append(line).append('\n');
            }
        }
        Map<String, Measurement> alongside = new LinkedHashMap<>();
        series.forEach((name, lines) -> {
            try {
                alongside.put(name, parse(lines.toString()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("[" + name + "]: " + e.getMessage(), e);
            }
        });
        return parseOwn(own.toString(), alongside);
    }

    private static Measurement parseOwn(String output, Map<String, Measurement> alongside) {
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
        return new Measurement(samples.stream().mapToDouble(Double::doubleValue).toArray(), check, info, alongside);
    }

    /** The measurement {@code name} timed alongside, or why there is none. */
    public Outcome alongside(String name) {
        Measurement m = alongside.get(name);
        return m != null ? m : new Outcome.Missing("the program printed no [" + name + "] samples");
    }

    /** The median sample (the mean of the middle two for an even count). */
    public double median() {
        return Report.median(sorted());
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
