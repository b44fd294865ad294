package dev.weft.backends.comm;

/**
 * A handle on a non-blocking operation ({@link Communicator#isend}, {@link Communicator#irecv}), completed by
 * {@link Communicator#wait} on the communicator that created it, exactly once. Until then the operation owns its
 * buffer: the caller must neither read a receive buffer nor rely on a send buffer being copied.
 */
public interface PendingRequest {
    /** Short description for error messages, like {@code irecv(4 x f32) from rank 1 tag 7 at Ring.java:12}. */
    String describe();
}
