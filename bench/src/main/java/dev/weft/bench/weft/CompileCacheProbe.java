package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The first call of one compiled program in a fresh JVM, printed as {@code compiled <ms>} (trace, lower, the
 * pipeline or the persistent compile cache, the executor, one run on a small input) and {@code cpu <ms>} (the
 * calling thread's CPU time in it, which a busy machine stretches less; the JIT's threads are not counted), then
 * {@code check <value>}.
 * {@link ColdBench} runs it twice per program on one new cache directory ({@code WEFT_CACHE_DIR}): the first
 * process fills the cache, the second reads it. Usage: {@code chain|mlp|cg}.
 */
public final class CompileCacheProbe {
    private CompileCacheProbe() {
    }

    /** The program names, as {@code main} takes them. */
    public static final String[] PROGRAMS = {"chain", "mlp", "cg"};

    /** Six operations, as in the chain case: {@code |sin(x*2+1)*x-0.5|}. */
    @Compile
    static Tensor chain(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    /** A tanh layer and a linear one. */
    record Net(Tensor w1, Tensor w2) {
    }

    /** 50 steps of gradient descent on a two-layer network's squared error. */
    @Compile
    static Tensor mlp(Tensor x, Tensor y, Tensor w1, Tensor w2) {
        Net trained = Weft.fori(0, 50, new Net(w1, w2), (i, n) -> {
            Net g = Weft.grad(n, p -> x.matmul(p.w1()).tanh().matmul(p.w2()).sub(y).pow(2).mean());
            return new Net(n.w1().sub(g.w1().mul(0.1)), n.w2().sub(g.w2().mul(0.1)));
        });
        return x.matmul(trained.w1()).tanh().matmul(trained.w2()).sub(y).pow(2).mean();
    }

    /** Conjugate-gradient state. */
    record Cg(Tensor x, Tensor r, Tensor p, Tensor rr) {
    }

    /** 30 conjugate-gradient steps on {@code a x = b}; returns the residual's norm. */
    @Compile
    static Tensor cg(Tensor a, Tensor b) {
        Tensor r0 = b;
        Cg done = Weft.fori(0, 30, new Cg(b.mul(0), r0, r0, r0.mul(r0).sum()), (i, s) -> {
            Tensor ap = a.matmul(s.p());
            Tensor alpha = s.rr().div(s.p().mul(ap).sum());
            Tensor x = s.x().add(s.p().mul(alpha));
            Tensor r = s.r().sub(ap.mul(alpha));
            Tensor rr = r.mul(r).sum();
            return new Cg(x, r, r.add(s.p().mul(rr.div(s.rr()))), rr);
        });
        return b.sub(a.matmul(done.x())).pow(2).sum().sqrt();
    }

    public static void main(String[] args) {
        Weft.install();
        String program = args[0];
        Tensor[] in = switch (program) {
            case "chain" -> new Tensor[] {Tensor.arange(DType.F32, 1000).mul(0.001)};
            case "mlp" -> new Tensor[] {Tensor.arange(DType.F64, 64).mul(0.03).sin().reshape(32, 2),
                Tensor.arange(DType.F64, 32).mul(0.1).cos().reshape(32, 1),
                Tensor.arange(DType.F64, 32).mul(0.7).sin().mul(0.5).reshape(2, 16),
                Tensor.arange(DType.F64, 16).mul(1.3).cos().mul(0.5).reshape(16, 1)};
            case "cg" -> new Tensor[] {spd(48), Tensor.arange(DType.F64, 48).mul(0.2).sin()};
            default -> throw new IllegalArgumentException("no program " + program + "; chain, mlp or cg");
        };
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long c0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        Tensor out = switch (program) {
            case "chain" -> chain(in[0]).sum();
            case "mlp" -> mlp(in[0], in[1], in[2], in[3]);
            default -> cg(in[0], in[1]);
        };
        double check = out.item();
        long t1 = System.nanoTime();
        long c1 = threads.getCurrentThreadCpuTime();
        System.out.println("compiled " + (t1 - t0) * 1e-6);
        System.out.println("cpu " + (c1 - c0) * 1e-6);
        System.out.println("check " + check);
    }

    /** The {@code n×n} tridiagonal matrix with 4 on the diagonal and -1 beside it. */
    private static Tensor spd(int n) {
        double[] a = new double[n * n];
        for (int i = 0; i < n; i++) {
            a[i * n + i] = 4;
            if (i > 0) {
                a[i * n + i - 1] = -1;
                a[(i - 1) * n + i] = -1;
            }
        }
        return Tensor.of(a, n, n);
    }
}
