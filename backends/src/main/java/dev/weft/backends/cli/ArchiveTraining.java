package dev.weft.backends.cli;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.cli.TrainingPrograms.Mlp;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.optim.Adam;
import dev.weft.optim.Sgd;
import dev.weft.spi.CommBinding;

/**
 * The training run of {@code bin/weft}'s class-data archive: the classes it loads ({@code -XX:DumpLoadedClassList})
 * are the ones a first run loads, on two fake ranks — the agent and its rewrite of a class with {@code @Compile}
 * methods, eager ops, and {@link TrainingPrograms} traced, lowered, compiled and run, then called again from the
 * cache. Exits non-zero if a result is wrong, so that a broken build makes no archive.
 */
public final class ArchiveTraining {
    private ArchiveTraining() {
    }

    public static void main(String[] args) {
        Weft.install();
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm comm = Comm.world();
            for (DType t : new DType[] {DType.F32, DType.F64}) {
                Tensor x = Tensor.arange(t, 1000).mul(0.001);
                double eager = x.mul(2).add(1).sin().mul(x).sub(0.5).abs().sum().item();
                for (int call = 0; call < 2; call++) {
                    check("chain " + t, TrainingPrograms.chain(x).sum().item(), eager, 1e-3);
                    TrainingPrograms.layer(comm, x.reshape(1, 1000), Tensor.full(t, 0.01, 1000, 8));
                    TrainingPrograms.loop(comm, x.add(comm.rank()));
                }
            }
            check("pi", TrainingPrograms.pi(comm, 1 << 16).item(), Math.PI, 1e-6);
            train(comm);
            return null;
        }));
    }

    /**
     * Steps of a small data-parallel network with each optimizer, enough of them that the executor's methods have
     * profiles; the first step's loss must be the eager one, and the loss must fall.
     */
    private static void train(Comm comm) {
        int n = 64;
        Tensor x = Tensor.arange(DType.F32, n * n).reshape(n, n).add(comm.rank()).mul(0.37).sin();
        Tensor y = Tensor.arange(DType.I64, n).add(comm.rank()).rem(4);
        Mlp init = new Mlp(Tensor.arange(DType.F32, n * n).reshape(n, n).mul(0.71).cos().mul(0.1),
                Tensor.zeros(DType.F32, n), Tensor.arange(DType.F32, n * 4).reshape(n, 4).mul(0.53).sin().mul(0.1),
                Tensor.zeros(DType.F32, 4));
        double eager = TrainingPrograms.loss(comm, init, x, y).item();
        Mlp p = init;
        Sgd.State<Mlp> sgd = Sgd.of(0.1).init(p);
        double first = Double.NaN;
        double last = Double.NaN;
        for (int i = 0; i < 30; i++) {
            TrainingPrograms.Step<Sgd.State<Mlp>> s = TrainingPrograms.sgdStep(comm, p, sgd, x, y);
            p = s.params();
            sgd = s.opt();
            last = s.loss().item();
            if (i == 0) {
                first = last;
            }
        }
        check("sgd step", first, eager, 1e-5);
        falls("sgd", first, last);
        p = init;
        Adam.State<Mlp> adam = Adam.of(0.01).init(p);
        for (int i = 0; i < 30; i++) {
            TrainingPrograms.Step<Adam.State<Mlp>> s = TrainingPrograms.adamStep(comm, p, adam, x, y);
            p = s.params();
            adam = s.opt();
            last = s.loss().item();
        }
        falls("adam", eager, last);
    }

    private static void falls(String optimizer, double first, double last) {
        if (!(last < first)) {
            throw new IllegalStateException("training with " + optimizer + ": the loss went from " + first + " to "
                    + last);
        }
    }

    private static void check(String what, double got, double want, double tolerance) {
        if (!(Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want)))) {
            throw new IllegalStateException("training program " + what + ": " + got + ", expected " + want);
        }
    }
}
