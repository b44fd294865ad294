package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/** A sent point-to-point message: a private copy of the send buffer, taken when the send was posted. */
record Message(int source, int tag, DType dtype, long count, MemorySegment data, SourceLocation where) {
}
