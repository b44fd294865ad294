package dev.weft.tracer;

import dev.weft.graph.Graph;

/**
 * Turns a traced graph into an executable; implemented by the backends and found with
 * {@link java.util.ServiceLoader}. Errors are {@link dev.weft.WeftException}s naming the user's source line.
 */
public interface CompilePipeline {
    /** Lowers {@code graph} for {@code target} ({@code "cpu"} or {@code "gpu"}) and prepares it to run. */
    Executable compile(Graph graph, String target);
}
