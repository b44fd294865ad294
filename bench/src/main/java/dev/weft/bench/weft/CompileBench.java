package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.io.PrintStream;

/**
 * Case 4: the first call of a compiled OPS-call program (trace, lower through every pass, build the executable,
 * run it once on a tiny input). Every call uses a new input length, so every call compiles afresh.
 * Usage: {@code OPS REPS WARMUP}; reports seconds per first call.
 */
public final class CompileBench {
    private CompileBench() {
    }

    /**
     * OPS Tensor calls, cycling through ten: eight elementwise ops (unary, with a constant, with the input, with
     * itself), a full reduction and a broadcasting subtraction of it.
     */
    @Compile
    static Tensor program(Tensor x, int ops) {
        Tensor y = x;
        Tensor s = x;
        for (int i = 0; i < ops; i++) {
            switch (i % 10) {
                case 0 -> y = y.mul(0.999);
                case 1 -> y = y.add(x);
                case 2 -> y = y.sin();
                case 3 -> y = y.mul(y);
                case 4 -> y = y.sub(0.25);
                case 5 -> y = y.abs();
                case 6 -> y = y.sqrt();
                case 7 -> y = y.cos();
                case 8 -> s = y.max();
                default -> y = y.sub(s);
            }
        }
        return y;
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("CompileBench", "OPS REPS WARMUP", args);
        Report report = new Report(out, true);
        int ops = Math.toIntExact(p[0]);
        long length = 1;
        for (long r = 0; r < p[2]; r++) {
            program(Tensor.ones(DType.F32, length++), ops);
        }
        for (long r = 0; r < p[1]; r++) {
            Tensor x = Tensor.ones(DType.F32, length++);
            long t0 = System.nanoTime();
            program(x, ops);
            report.sample(Report.since(t0));
        }
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
