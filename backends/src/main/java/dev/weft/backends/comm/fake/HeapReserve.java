package dev.weft.backends.comm.fake;

/**
 * Heap held back for fake worlds and let go when one of their ranks runs out of memory: the ranks share this JVM's
 * heap, so that rank's failure, the other ranks' ends and the report of them all need some to run in. One reserve
 * per JVM, taken again when the next world starts: a reserve per world would allocate a large array for every
 * world a test suite runs, and keep one per world still referenced.
 */
final class HeapReserve {
    private static final long MAX_BYTES = 32L << 20;
    private static final Object LOCK = new Object();
    private static byte[] reserve;

    private HeapReserve() {
    }

    /** Takes the reserve if it is not held (and there is heap for it: a world may start on a full heap). */
    static void hold() {
        synchronized (LOCK) {
            if (reserve == null) {
                try {
                    reserve = new byte[(int) Math.min(Runtime.getRuntime().maxMemory() / 32, MAX_BYTES)];
                } catch (OutOfMemoryError full) {
                    reserve = null;
                }
            }
        }
    }

    /** Lets the reserve go when {@code failure} is an {@link OutOfMemoryError}. */
    static void releaseOn(Throwable failure) {
        if (failure instanceof OutOfMemoryError) {
            synchronized (LOCK) {
                reserve = null;
            }
        }
    }
}
