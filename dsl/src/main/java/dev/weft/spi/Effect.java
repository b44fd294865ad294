package dev.weft.spi;

/**
 * The effect of one application of a primitive, computed from its parameters ({@link Primitive#effect}). A
 * {@link Pure} application may be removed, merged and reordered; an {@link Ordered} one (communication) runs
 * exactly once, in program order among the applications ordered on the same communicator, whether or not its
 * results are used. Lowered ops carry it, and the passes read it from there.
 */
public sealed interface Effect {
    /** The effect of every array operation. */
    Effect PURE = new Pure();

    /** No effect. */
    record Pure() implements Effect {
    }

    /**
     * Ordered on {@code comm}: one chain per communicator (compared by identity, as {@link CommHandle}s are), so
     * operations on different communicators stay independent.
     */
    record Ordered(CommHandle comm) implements Effect {
        @Override
        public boolean equals(Object o) {
            return o instanceof Ordered other && other.comm == comm;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(comm);
        }
    }
}
