package dev.weft.backends.comm.flight;

import java.util.Locale;

/** The kinds of {@link dev.weft.backends.comm.Communicator} operation a flight recorder keeps. */
public enum FlightOp {
    BARRIER, SEND, RECV, ISEND, IRECV,
    /** A {@code wait} for an {@code isend}'s request. */
    WAIT_ISEND,
    /** A {@code wait} for an {@code irecv}'s request. */
    WAIT_IRECV,
    SENDRECV, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE, ALLTOALL, SPLIT, DUP,
    /**
     * Weft's own duplicate for the schedule check ({@code <name>.weft}): made with each communicator and not recorded
     * since; kept to read the files of earlier versions.
     */
    PRIVATE_DUP,
    FREE;

    /** Lower-case name, as in dumps and flight files: {@code allreduce}, {@code wait_irecv}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind labelled {@code label}. */
    public static FlightOp of(String label) {
        return valueOf(label.toUpperCase(Locale.ROOT));
    }

    /**
     * Whether every rank of the communicator calls it, in the same order: these are numbered per communicator.
     * {@code free} is left out: the fake runtime frees locally.
     */
    public boolean collective() {
        return switch (this) {
            case BARRIER, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE, ALLTOALL, SPLIT, DUP, PRIVATE_DUP -> true;
            default -> false;
        };
    }

    /** Whether it sends to its peer (a {@code sendrecv} also receives from its second peer). */
    public boolean sends() {
        return this == SEND || this == ISEND || this == WAIT_ISEND || this == SENDRECV;
    }

    /** Whether it receives from its peer ({@code sendrecv}: from its second peer). */
    public boolean receives() {
        return this == RECV || this == IRECV || this == WAIT_IRECV || this == SENDRECV;
    }

    /** Whether its peer is a root ({@code bcast}, {@code reduce}). */
    public boolean rooted() {
        return this == BCAST || this == REDUCE;
    }
}
