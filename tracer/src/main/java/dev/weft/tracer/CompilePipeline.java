package dev.weft.tracer;

import dev.weft.graph.Graph;

/**
 * Turns a traced graph into an executable; implemented by the backends and found with
 * {@link java.util.ServiceLoader}. Errors are {@link dev.weft.WeftException}s naming the user's source line.
 */
public interface CompilePipeline {
    /** The name of the target a call compiles for when the system property {@code weft.target} is not set. */
    String defaultTarget();

    /**
     * Lowers {@code graph} for the target named {@code target} and prepares it to run; an unknown name is an
     * error listing the known ones.
     */
    Executable compile(Graph graph, String target);
}
