package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.comm.ReduceOp;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An implicit {@code pvary} on the tape (JAX's): a tangent invariant over some communicators used where it must
 * vary. Its value is the tangent's; its transpose sums the cotangent over each such communicator, since every
 * rank's varying use of the one invariant value contributes to its cotangent.
 *
 * @param steps one per communicator over which the tangent may be made varying
 */
record Pvary(List<Step> steps) {
    /**
     * Over {@code comm}: the tangent is invariant given {@code from}, and the use wants invariance given {@code onto}
     * ({@code null}: varying). The pvary applies when the first holds and the second does not.
     */
    record Step(CommHandle comm, Set<Tensor> from, Set<Tensor> onto) {
        boolean applies(Map<CommHandle, Map<Tensor, Boolean>> settled) {
            return holds(from, settled) && (onto == null || !holds(onto, settled));
        }

        private boolean holds(Set<Tensor> conditions, Map<CommHandle, Map<Tensor, Boolean>> settled) {
            Map<Tensor, Boolean> same = settled.getOrDefault(comm, Map.of());
            return conditions.stream().allMatch(t -> same.getOrDefault(t, false));
        }
    }

    /**
     * JAX's explicit {@code pvary} of {@code t} over {@code comm}, at the current level: the transposes of the
     * collectives with invariant results return their cotangent through it, so that transposing them again (a
     * gradient of a gradient, {@code linearTranspose} twice) gives the collective back, as in mpi4jax. Below every
     * transform (eagerly, or in a compiled program) it is {@code t} itself.
     */
    static Tensor explicit(Tensor t, CommHandle comm) {
        return Interpreters.current() instanceof TransformLevel level ? level.pvary(t, comm) : t;
    }

    /** The cotangent of the pvary's operand from its result's {@code ct}, the conditions {@code settled}. */
    Tensor transpose(Tensor ct, Map<CommHandle, Map<Tensor, Boolean>> settled) {
        Tensor out = ct;
        for (Step s : steps) {
            if (s.applies(settled)) {
                out = CommPrims.bind(new CommOp.AllReduce(s.comm(), ReduceOp.SUM), out).getFirst();
            }
        }
        return out;
    }
}
