package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * Case 2: compiled {@code a.matmul(b)} on N x N f32. Usage: {@code N REPS WARMUP}; reports seconds per call,
 * the f64 sum of the product (exact: every partial sum is a multiple of 1/8 well inside f32's range) and the
 * BLAS libraries this process mapped, which says whether a native BLAS ran.
 */
public final class MatmulBench {
    private MatmulBench() {
    }

    @Compile
    static Tensor matmul(Tensor a, Tensor b) {
        return a.matmul(b);
    }

    /** The inputs every implementation of case 2 uses: {@code a[i,j] = ((i*n+j) mod 7)/4 - 3/4}, {@code b[i,j] = ((i+2j) mod 5)/2 - 1}. */
    static Tensor[] inputs(int n) {
        float[] a = new float[n * n], b = new float[n * n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                a[i * n + j] = (float) (((long) i * n + j) % 7 * 0.25 - 0.75);
                b[i * n + j] = (float) ((i + 2L * j) % 5 * 0.5 - 1.0);
            }
        }
        return new Tensor[] {Tensor.of(a, n, n), Tensor.of(b, n, n)};
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("MatmulBench", "N REPS WARMUP", args);
        Report report = new Report(out, true);
        Tensor[] ab = inputs(Math.toIntExact(p[0]));
        for (long r = 0; r < p[2]; r++) {
            matmul(ab[0], ab[1]);
        }
        Report.settle();
        Tensor c = ab[0];
        for (long r = 0; r < p[1]; r++) {
            long t0 = System.nanoTime();
            c = matmul(ab[0], ab[1]);
            report.sample(Report.since(t0));
        }
        double sum = 0;
        for (float v : c.toFloatArray()) {
            sum += v;
        }
        report.check(sum);
        report.info("BLAS: " + mappedBlas());
    }

    /** Resolved paths of the BLAS-like shared libraries mapped into this process, or "none mapped". */
    private static String mappedBlas() {
        try (var lines = Files.lines(Path.of("/proc/self/maps"))) {
            String found = lines.map(l -> l.substring(l.lastIndexOf(' ') + 1))
                    .filter(f -> f.contains(".so") && (f.toLowerCase().contains("blas") || f.contains("mkl")))
                    .distinct().sorted().collect(Collectors.joining(", "));
            return found.isEmpty() ? "none mapped (Java kernel)" : found;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
