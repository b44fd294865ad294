package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;

/**
 * What {@link Comm#recvAny} received: the tensor, and the source and tag of the message it matched.
 *
 * <p>The source and tag are values of the run, as {@link Comm#rankTensor()} is, and held as I32 scalar tensors
 * ({@link #sourceTensor()}, {@link #tagTensor()}), which work eagerly and inside {@code @Compile}. {@link #source()}
 * and {@link #tag()} give them as host ints, like {@link Comm#rank()}: eagerly always, and inside {@code @Compile}
 * only where the receive named them (a rank rather than {@link Comm#ANY_SOURCE}, a tag rather than
 * {@link Comm#ANY_TAG}); a wildcard's is not known while tracing, so asking for it there is a
 * {@link TracedValueException} naming the line.
 */
public final class Received {
    private final Tensor tensor;
    private final Tensor status;
    private final int source;
    private final int tag;
    private final SourceLocation where;

    /**
     * @param status the matched source and tag, an i32[2]
     * @param source the source asked for: a rank, {@link Comm#ANY_SOURCE} or {@link Comm#PROC_NULL}
     * @param tag    the tag asked for, or {@link Comm#ANY_TAG}
     */
    Received(Tensor tensor, Tensor status, int source, int tag, SourceLocation where) {
        this.tensor = tensor;
        this.status = status;
        this.source = source;
        this.tag = tag;
        this.where = where;
    }

    /** The received tensor. */
    public Tensor tensor() {
        return tensor;
    }

    /** The matched message's source rank, an I32 scalar; a run-time value inside {@code @Compile}. */
    public Tensor sourceTensor() {
        return status.slice(new long[] {0}, new long[] {1}).reshape();
    }

    /** The matched message's tag, an I32 scalar; a run-time value inside {@code @Compile}. */
    public Tensor tagTensor() {
        return status.slice(new long[] {1}, new long[] {2}).reshape();
    }

    /**
     * The matched message's source rank. Inside {@code @Compile}, for a receive from {@link Comm#ANY_SOURCE}, a
     * {@link TracedValueException}: use {@link #sourceTensor()}.
     */
    public int source() {
        return source != Comm.ANY_SOURCE ? source : read(0, "source", "sourceTensor()", "ANY_SOURCE");
    }

    /**
     * The matched message's tag. Inside {@code @Compile}, for a receive with {@link Comm#ANY_TAG}, a
     * {@link TracedValueException}: use {@link #tagTensor()}.
     */
    public int tag() {
        return tag != Comm.ANY_TAG ? tag : read(1, "tag", "tagTensor()", "ANY_TAG");
    }

    private int read(int index, String what, String instead, String wildcard) {
        if (TensorAccess.traced(status) != null) {
            throw new TracedValueException(SourceLocation.capture(), "Received." + what + "() of the recvAny with "
                    + wildcard + " at " + where + " is a run-time value inside @Compile; use " + instead);
        }
        return status.toIntArray()[index];
    }

    @Override
    public String toString() {
        return "Received(" + TensorAccess.aval(tensor) + " from " + where + ")";
    }
}
