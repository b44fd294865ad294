package dev.weft.lowering.passes;

import dev.weft.spi.OutputDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Receives the module's MLIR text after lowering ({@code lowered}) and after each pass of a pipeline. */
@FunctionalInterface
public interface StageListener {
    /** Ignores every stage (and lets the pipeline skip printing). */
    StageListener NONE = (stage, mlir) -> { };

    void stage(String name, String mlir);

    /** Writes stage {@code k} (counting from 0) to {@code dir/NN-<name>.mlir}, creating the directory. */
    static StageListener toDirectory(OutputDirectory dir) {
        int[] next = {0};
        return (stage, mlir) -> {
            try {
                dir.write(String.format("%02d-%s.mlir", next[0]++, stage), out -> out.write(mlir));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot dump stage " + stage + ": " + e.getMessage(), e);
            }
        };
    }

    /** This listener, then {@code other}. */
    default StageListener andThen(StageListener other) {
        if (this == NONE) {
            return other;
        }
        return other == NONE ? this : (stage, mlir) -> {
            stage(stage, mlir);
            other.stage(stage, mlir);
        };
    }
}
