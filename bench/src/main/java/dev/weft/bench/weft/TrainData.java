package dev.weft.bench.weft;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.io.Npy;
import dev.weft.random.Key;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Case 12's starting point, written once for Weft's program and PyTorch's to load: the MLP's parameters in
 * PyTorch's default initialisation (uniform in {@code ±1/sqrt(fan_in)}, weights and biases) as {@code w1.npy} ...
 * {@code b3.npy} (weights {@code [in, out]}), and for each of RANKS ranks a batch of {@link TrainBench#BATCH}
 * standard normal f32 samples {@code x<r>.npy} with i64 labels in {@code [0, 10)} {@code y<r>.npy}, all from the
 * fixed seed {@link #SEED} by {@link Key}. Usage: {@code DIR RANKS}; prints the seconds it took as its one
 * sample (the driver runs it as it runs the benchmark programs).
 */
public final class TrainData {
    static final long SEED = 12;

    private TrainData() {
    }

    /** Writes the files into {@code dir} for {@code ranks} ranks. */
    static void write(Path dir, int ranks) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Key> keys = Key.of(SEED).split(6 + 2 * ranks);
        int[] fanIn = {TrainBench.IN, TrainBench.HIDDEN, TrainBench.HIDDEN};
        int[] fanOut = {TrainBench.HIDDEN, TrainBench.HIDDEN, TrainBench.CLASSES};
        for (int l = 0; l < 3; l++) {
            double bound = 1 / Math.sqrt(fanIn[l]);
            Npy.save(dir.resolve("w" + (l + 1) + ".npy"), symmetric(keys.get(2 * l), bound, fanIn[l], fanOut[l]));
            Npy.save(dir.resolve("b" + (l + 1) + ".npy"), symmetric(keys.get(2 * l + 1), bound, fanOut[l]));
        }
        for (int r = 0; r < ranks; r++) {
            Npy.save(dir.resolve("x" + r + ".npy"), keys.get(6 + 2 * r).normal(DType.F32, TrainBench.BATCH,
                    TrainBench.IN));
            Npy.save(dir.resolve("y" + r + ".npy"), keys.get(7 + 2 * r).uniform(DType.F32, TrainBench.BATCH)
                    .mul(TrainBench.CLASSES).cast(DType.I64));
        }
    }

    /** Uniform numbers in {@code [-bound, bound)}. */
    private static Tensor symmetric(Key key, double bound, long... shape) {
        return key.uniform(DType.F32, shape).mul(2 * bound).sub(bound);
    }

    public static void main(String[] args) {
        Weft.install();
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: TrainData DIR RANKS");
        }
        long t0 = System.nanoTime();
        write(Path.of(args[0]), Integer.parseInt(args[1]));
        new Report(System.out, true).sample(Report.since(t0));
    }
}
