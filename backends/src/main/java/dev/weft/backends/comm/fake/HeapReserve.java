package dev.weft.backends.comm.fake;

/**
 * Heap held back while a fake world runs and let go when one of its ranks runs out of memory: the ranks share this
 * JVM's heap, so that rank's failure, the other ranks' ends and the report of them all need some to run in.
 */
final class HeapReserve {
    private static final long MAX_BYTES = 64L << 20;

    @SuppressWarnings("unused") // held only so that releasing it frees the heap it takes
    private volatile byte[] reserve = new byte[(int) Math.min(Runtime.getRuntime().maxMemory() / 32, MAX_BYTES)];

    /** Lets the reserve go when {@code failure} is an {@link OutOfMemoryError}. */
    void releaseOn(Throwable failure) {
        if (failure instanceof OutOfMemoryError) {
            reserve = null;
        }
    }
}
