package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/**
 * A sent point-to-point message: a private copy of the send buffer, taken when the send was posted, and the send
 * request, which completes when a receive matches the message (or at once, for a buffered send).
 */
record Message(int source, int tag, DType dtype, long count, MemorySegment data, SourceLocation where,
               FakeRequest send) {
}
