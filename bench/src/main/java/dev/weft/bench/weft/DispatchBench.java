package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.io.PrintStream;
import java.util.Arrays;

/**
 * Case 3: the cost of one call of a cached compiled function on a tiny tensor ({@code x + 1} on f32[4]).
 * Usage: {@code MODE CALLS REPS WARMUP} with MODE {@code compiled} (the {@code @Compile} method), {@code eager}
 * ({@code Tensor.add} outside a trace) or {@code loop} (a plain Java loop on a fresh {@code float[4]}: the work
 * without Weft); {@code record} and {@code recordLoop} do the same to each of a record of four such, which the
 * compiled method takes and returns as a tree. Each call consumes the previous result, so no call can be skipped or
 * hoisted; a sample is the seconds per call over CALLS calls. The check is the sum of the last result.
 */
public final class DispatchBench {
    private static final float[] X0 = {0.5f, 1.5f, 2.5f, 3.5f};

    private DispatchBench() {
    }

    @Compile
    static Tensor addOne(Tensor x) {
        return x.add(1);
    }

    /** Four tensors, a tree argument and result. */
    record Quad(Tensor a, Tensor b, Tensor c, Tensor d) {
    }

    /** {@link Quad} as plain arrays. */
    private record QuadArrays(float[] a, float[] b, float[] c, float[] d) {
    }

    @Compile
    static Quad addOne(Quad q) {
        return new Quad(q.a().add(1), q.b().add(1), q.c().add(1), q.d().add(1));
    }

    private static float[] addOne(float[] x) {
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = x[i] + 1;
        }
        return y;
    }

    /** CALLS chained calls in MODE from {@link #X0}; returns the last result. */
    private static float[] calls(String mode, long calls) {
        switch (mode) {
            case "compiled" -> {
                Tensor x = Tensor.of(X0, X0.length);
                for (long c = 0; c < calls; c++) {
                    x = addOne(x);
                }
                return x.toFloatArray();
            }
            case "eager" -> {
                Tensor x = Tensor.of(X0, X0.length);
                for (long c = 0; c < calls; c++) {
                    x = x.add(1);
                }
                return x.toFloatArray();
            }
            case "loop" -> {
                float[] x = X0;
                for (long c = 0; c < calls; c++) {
                    x = addOne(x);
                }
                return x;
            }
            case "record" -> {
                Quad q = new Quad(Tensor.of(X0, X0.length), Tensor.of(X0, X0.length), Tensor.of(X0, X0.length),
                        Tensor.of(X0, X0.length));
                for (long c = 0; c < calls; c++) {
                    q = addOne(q);
                }
                return q.d().toFloatArray();
            }
            case "recordLoop" -> {
                QuadArrays q = new QuadArrays(X0, X0, X0, X0);
                for (long c = 0; c < calls; c++) {
                    q = new QuadArrays(addOne(q.a()), addOne(q.b()), addOne(q.c()), addOne(q.d()));
                }
                return q.d();
            }
            default -> throw new IllegalArgumentException("MODE is compiled, eager, loop, record or recordLoop, got "
                    + mode);
        }
    }

    static void run(String[] args, PrintStream out) {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: DispatchBench MODE CALLS REPS WARMUP");
        }
        String mode = args[0];
        long[] p = Report.args("DispatchBench " + mode, "CALLS REPS WARMUP",
                Arrays.copyOfRange(args, 1, args.length));
        Report report = new Report(out, true);
        for (long r = 0; r < p[2]; r++) {
            calls(mode, p[0]);
        }
        Report.settle();
        float[] last = X0;
        for (long r = 0; r < p[1]; r++) {
            long t0 = System.nanoTime();
            last = calls(mode, p[0]);
            report.sample(Report.since(t0) / p[0]);
        }
        double sum = 0;
        for (float v : last) {
            sum += v;
        }
        report.check(sum);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
