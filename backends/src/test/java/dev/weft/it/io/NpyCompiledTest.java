package dev.weft.it.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.io.Npy;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A traced tensor cannot be saved: {@code Npy.save} inside {@code @Compile} is an error, and writes nothing. */
class NpyCompiledTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor saveInside(Tensor x, String path) {
        Npy.save(Path.of(path), x);
        return x;
    }

    @Test
    void aTracedTensorCannotBeSaved() {
        Path f = dir.resolve("traced.npy");
        assertThatThrownBy(() -> saveInside(Tensor.of(new float[] {1}, 1), f.toString()))
                .isInstanceOf(TracedValueException.class).hasMessageContaining("save it outside @Compile");
        assertThat(Files.exists(f)).isFalse();
    }
}
