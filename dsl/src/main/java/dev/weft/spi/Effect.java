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

    /** This effect as a lowered op carries it: on its communicator's {@link CommRef}. */
    default Effect symbolic() {
        return this;
    }

    /** No effect. */
    record Pure() implements Effect {
    }

    /**
     * Ordered on {@code comm}: one chain per communicator, so operations on different communicators stay
     * independent. Live {@link CommHandle}s compare by identity, {@link CommRef}s by name.
     */
    record Ordered(CommId comm) implements Effect {
        @Override
        public Effect symbolic() {
            return new Ordered(comm.ref());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Ordered other && switch (comm) {
                case CommHandle h -> other.comm == h;
                case CommRef r -> r.equals(other.comm);
            };
        }

        @Override
        public int hashCode() {
            return switch (comm) {
                case CommHandle h -> System.identityHashCode(h);
                case CommRef r -> r.hashCode();
            };
        }
    }
}
