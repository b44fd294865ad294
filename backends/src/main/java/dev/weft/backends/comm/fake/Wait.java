package dev.weft.backends.comm.fake;

import dev.weft.spi.SourceLocation;

/**
 * What a blocked rank waits for. Every method is called with the world's lock held and reads state that only
 * changes under it.
 */
interface Wait {
    /** Whether the rank can go on (its operation completed, or failed in a way it will report itself). */
    boolean ready();

    /** World ranks whose action this wait still needs; if one of them has ended, the wait can never complete. */
    int[] awaitedWorldRanks();

    /** Like {@code recv(4 x f32) on 'world' from rank 1 tag 7}. */
    String describe();

    SourceLocation where();

    /** A note for the deadlock report on how programs avoid this kind of wait, or null. */
    default String hint() {
        return null;
    }
}
