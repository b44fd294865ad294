package dev.weft.spi;

/**
 * How a communication op's descriptor names its communicator: the live {@link CommHandle} while tracing (shape
 * rules and autodiff read its rank and size), its {@link CommRef} from lowering on, so that a lowered module holds
 * no runtime object and prints the same on every run.
 */
public sealed interface CommId permits CommHandle, CommRef {
    /** Stable, human-readable name, e.g. {@code world} or {@code world.split(1)#0}. */
    String name();

    /** The symbolic reference to this communicator. */
    CommRef ref();
}
