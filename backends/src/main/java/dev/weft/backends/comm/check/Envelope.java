package dev.weft.backends.comm.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * What travels ahead of a point-to-point message on the check's private communicator ({@link CommCheck}): the
 * message's key (dtype and count), its number on its channel, and the sender's call and line,
 * cut to fit, in {@value #LONGS} longs.
 */
record Envelope(long key, long number, String sender) {
    static final int LONGS = 32;
    private static final int HEADER = 3;
    private static final int TEXT_BYTES = (LONGS - HEADER) * Long.BYTES;

    /** The envelope of {@code step}, the {@code number}-th message on its channel, in a new native buffer. */
    static MemorySegment encode(CommStep step, long number) {
        MemorySegment buf = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, LONGS);
        byte[] text = step.describeAt().getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, TEXT_BYTES);
        buf.setAtIndex(ValueLayout.JAVA_LONG, 0, step.messageKey());
        buf.setAtIndex(ValueLayout.JAVA_LONG, 1, number);
        buf.setAtIndex(ValueLayout.JAVA_LONG, 2, n);
        MemorySegment.copy(MemorySegment.ofArray(text), 0, buf, HEADER * Long.BYTES, n);
        return buf;
    }

    /** The envelope in {@code buf}, as {@link #encode} wrote it. */
    static Envelope decode(MemorySegment buf) {
        long n = Math.clamp(buf.getAtIndex(ValueLayout.JAVA_LONG, 2), 0, TEXT_BYTES);
        String text = new String(buf.asSlice(HEADER * Long.BYTES, n).toArray(ValueLayout.JAVA_BYTE),
                StandardCharsets.UTF_8);
        return new Envelope(buf.getAtIndex(ValueLayout.JAVA_LONG, 0), buf.getAtIndex(ValueLayout.JAVA_LONG, 1), text);
    }
}
