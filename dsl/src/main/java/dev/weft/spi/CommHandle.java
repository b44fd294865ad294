package dev.weft.spi;

/**
 * A runtime's handle on one communicator as seen by one rank (fake ranks, MPI, NCCL bootstrap). The
 * communication primitives carry it in their parameters while tracing; lowering replaces it by its
 * {@link #ref()}, which an executable binds back to a handle ({@link CommBindings}).
 */
public non-sealed interface CommHandle extends CommId {
    int rank();

    int size();

    /**
     * Stable, human-readable name used in IR and error reports, e.g. {@code world} or {@code world.split(1)#0}:
     * distinct among this rank's communicators, and the same on every run of one program.
     */
    @Override
    String name();

    @Override
    default CommRef ref() {
        return new CommRef(name());
    }

    /**
     * MPI_Comm_split: ranks with equal {@code color} form a communicator ordered by {@code key}, then rank. A
     * negative color is an error (no MPI_UNDEFINED): every rank gets a communicator.
     */
    CommHandle split(int color, int key, SourceLocation where);

    /** MPI_Comm_dup: the same group with a separate message space. */
    CommHandle dup(SourceLocation where);
}
