package dev.weft.lowering;

import dev.weft.lowering.ir.Module;
import dev.weft.lowering.passes.Pipeline;
import dev.weft.spi.CommBindings;
import dev.weft.tracer.Executable;

/**
 * What a program is compiled for: a name, the passes run on a module lowered for it, and the executor that runs
 * the result. Backends implement it ({@code cpu}, {@code gpu}) and list their targets in
 * {@code META-INF/services/dev.weft.lowering.Target}; {@link Targets} finds them by name. Strings a user types
 * ({@code -Dweft.target}, {@code bin/weft ir --target}, {@code Weft.lower(target, ...)}) are resolved to a target
 * once, where they enter; everything below works on the target itself.
 *
 * <p>A target's lowering rules are those registered in {@link LoweringRules} under its {@link #name()}, with the
 * rules for {@link LoweringRules#ANY_TARGET} as the fallback. What differs between targets in the shared passes
 * (whether fused loops read views, whether reductions fuse) is a value given to the passes of its
 * {@link #pipeline()}, never a test of its name.
 */
public interface Target {
    /** The name users type, under which this target's own lowering rules are registered. */
    String name();

    /** The passes run, in order, on a module just lowered for this target. */
    Pipeline pipeline();

    /**
     * The namespace of its communication custom calls, {@code <prefix><op>}: {@code weft.mpi.} where the runtime
     * is MPI's (or the fake), {@code weft.nccl.} where it is NCCL.
     */
    String commCallPrefix();

    /**
     * Told of {@code module} just lowered for this target, before its pipeline runs: a target may start, on a thread
     * of its own, work that the executable will need (loading a library its ops call), so that it overlaps the
     * passes and the executor's build. Returns at once; does nothing by default.
     */
    default void lowered(Module module) {
    }

    /**
     * Prepares {@code module}, lowered for this target and run through its pipeline, to run on this target's
     * executor, its communication ops on the communicators {@code comms} binds to their references.
     *
     * @throws dev.weft.WeftException when the executor cannot run here (no device)
     */
    Executable executable(Module module, CommBindings comms);

    /**
     * The module as {@code bin/weft ir} prints it: its MLIR text, followed by whatever this target generates
     * from it that a reader wants to see (the GPU's kernels).
     */
    default String listing(Module module) {
        return module.toMlir();
    }
}
