package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.io.PrintStream;

/**
 * Case 1: {@code y = |sin(x*2+1)*x - 0.5|} over N f32 values, compiled (six elementwise ops the fusion pass
 * may join). Usage: {@code N REPS WARMUP}; reports seconds per call and the f64 sum of y.
 */
public final class ChainBench {
    private ChainBench() {
    }

    @Compile
    static Tensor chain(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    /** The input every implementation of case 1 uses: {@code x[i] = (i mod 1000) * 0.001 - 0.5}, rounded to f32. */
    static float[] input(int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) ((i % 1000) * 0.001 - 0.5);
        }
        return x;
    }

    static void run(String[] args, PrintStream out) {
        long[] a = Report.args("ChainBench", "N REPS WARMUP", args);
        Report report = new Report(out, true);
        int n = Math.toIntExact(a[0]);
        Tensor x = Tensor.of(input(n), n);
        for (long r = 0; r < a[2]; r++) {
            chain(x);
        }
        Report.settle();
        Tensor y = x;
        for (long r = 0; r < a[1]; r++) {
            long t0 = System.nanoTime();
            y = chain(x);
            report.sample(Report.since(t0));
        }
        double sum = 0;
        for (float v : y.toFloatArray()) {
            sum += v;
        }
        report.check(sum);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
