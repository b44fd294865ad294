package dev.weft.backends.cli;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
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
            return null;
        }));
    }

    private static void check(String what, double got, double want, double tolerance) {
        if (!(Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want)))) {
            throw new IllegalStateException("training program " + what + ": " + got + ", expected " + want);
        }
    }
}
