package dev.weft.it.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.io.Checkpoint;
import dev.weft.io.Npy;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import dev.weft.testing.RankRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints: a record with a row-sharded and a replicated leaf saved on 2 ranks loads on 1 and 3 ranks (resharded)
 * with the same values; saving again replaces the checkpoint whole; broken checkpoints are errors naming the file
 * and the leaf.
 */
class CheckpointTest {
    record Model(Tensor embedding, Tensor bias, int layers) {
    }

    @TempDir
    Path dir;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    static Tensor table() {
        double[] v = new double[10 * 3];
        Arrays.setAll(v, i -> i * 0.5 - 3);
        return Tensor.of(v, 10, 3);
    }

    static Model model(Comm c, Tensor table, Tensor bias) {
        Sharding rows = Sharding.of(Mesh.of(c, "x"), "x", null);
        return new Model(Sharding.put(table, rows), bias, 4);
    }

    @Test
    void savedOnTwoRanksLoadsOnOneAndThree() {
        Path ckpt = dir.resolve("ckpt");
        Tensor bias = Tensor.of(new float[] {1.5f, -2});
        RankRunner.run(2, c -> Checkpoint.save(ckpt, model(c, table(), bias), c));
        assertThat(ckpt.resolve("manifest.txt")).exists();
        assertThat(Npy.load(ckpt.resolve("leaf1.npy")).toFloatArray()).containsExactly(1.5f, -2);
        for (int n : new int[] {1, 3}) {
            RankRunner.run(n, c -> {
                Model template = model(c, Tensor.zeros(DType.F64, 10, 3), Tensor.zeros(DType.F32, 2));
                Model back = Checkpoint.load(ckpt, template, c);
                assertThat(back.layers()).isEqualTo(4);
                assertThat(back.bias().toFloatArray()).containsExactly(1.5f, -2);
                assertThat(Sharding.of(back.embedding())).isEqualTo(Sharding.of(template.embedding()));
                assertThat(Sharding.gather(back.embedding()).toDoubleArray()).containsExactly(table().toDoubleArray());
            });
        }
        // saving again replaces it whole, and leaves no staging directory behind
        RankRunner.run(3, c -> Checkpoint.save(ckpt, model(c, table().mul(2), bias), c));
        Model once = Checkpoint.load(ckpt, new Model(Tensor.zeros(DType.F64, 10, 3), Tensor.zeros(DType.F32, 2), 4),
                Comm.world());
        assertThat(once.embedding().toDoubleArray()).containsExactly(table().mul(2).toDoubleArray());
        assertThat(dir.resolve("ckpt.saving")).doesNotExist();
        assertThat(dir.resolve("ckpt.old")).doesNotExist();
    }

    @Test
    void brokenCheckpointsAreErrorsNamingTheFileAndTheLeaf() throws IOException {
        Path ckpt = dir.resolve("c");
        Model m = new Model(table(), Tensor.of(new float[] {1, 2}), 1);
        Checkpoint.save(ckpt, m, Comm.world());
        Model wrongShape = new Model(Tensor.zeros(DType.F64, 9, 3), Tensor.zeros(DType.F32, 2), 1);
        assertThatThrownBy(() -> Checkpoint.load(ckpt, wrongShape, Comm.world())).isInstanceOf(ShapeException.class)
                .hasMessageContaining("leaf 0").hasMessageContaining("f64[10, 3] but the template's is f64[9, 3]")
                .hasMessageStartingWith("CheckpointTest.java:");
        byte[] bytes = Files.readAllBytes(ckpt.resolve("leaf0.npy"));
        Files.write(ckpt.resolve("leaf0.npy"), Arrays.copyOf(bytes, bytes.length / 2));
        assertThatThrownBy(() -> Checkpoint.load(ckpt, m, Comm.world())).isInstanceOf(WeftException.class)
                .hasMessageContaining("leaf 0").hasMessageContaining("leaf0.npy is truncated");
        Files.delete(ckpt.resolve("manifest.txt"));
        assertThatThrownBy(() -> Checkpoint.load(ckpt, m, Comm.world())).isInstanceOf(WeftException.class)
                .hasMessageContaining("cannot read").hasMessageContaining("manifest.txt");
    }
}
