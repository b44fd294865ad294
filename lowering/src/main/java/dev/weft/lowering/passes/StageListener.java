package dev.weft.lowering.passes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Receives the module's MLIR text after lowering ({@code lowered}) and after each pass of a pipeline. */
@FunctionalInterface
public interface StageListener {
    /** Ignores every stage (and lets the pipeline skip printing). */
    StageListener NONE = (stage, mlir) -> { };

    void stage(String name, String mlir);

    /** Writes stage {@code k} (counting from 0) to {@code dir/NN-<name>.mlir}, creating the directory. */
    static StageListener toDirectory(Path dir) {
        int[] next = {0};
        return (stage, mlir) -> {
            try {
                Files.createDirectories(dir);
                Files.writeString(dir.resolve(String.format("%02d-%s.mlir", next[0]++, stage)), mlir);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot dump stage " + stage + " to " + dir, e);
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
