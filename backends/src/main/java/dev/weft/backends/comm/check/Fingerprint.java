package dev.weft.backends.comm.check;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The compact form of one rank's schedule on a communicator of {@code size} ranks that the ranks exchange:
 * {@code 1 + 2 * size} longs. Entry 0 hashes the sequence of collectives (which every rank must run alike, in
 * order); entry {@code 1 + j} hashes this rank's sends to rank {@code j} and entry {@code 1 + size + j} its
 * receives from rank {@code j}, per tag in order (dtype and count of each message), so that rank {@code i}'s
 * sends to {@code j} must hash as {@code j}'s receives from {@code i}. A pair with a message inside a
 * data-dependent {@link Branch} is {@link #UNCHECKED}; such a branch's collectives count as one element unless
 * both branches run the same ones. Loops are hashed as repeated blocks, never unrolled.
 */
final class Fingerprint {
    /** A pair whose messages are not compared. */
    static final long UNCHECKED = Long.MIN_VALUE;

    private final Map<Channel, SequenceHash> channels = new TreeMap<>();
    private final Set<Channel> unchecked = new HashSet<>();
    private final SequenceHash collectives;

    private Fingerprint(List<ScheduleItem> items) {
        this.collectives = walk(items, channels, unchecked);
    }

    /** The row of {@code items} on a communicator of {@code size} ranks. */
    static long[] row(List<ScheduleItem> items, int size) {
        Fingerprint f = new Fingerprint(items);
        long[] row = new long[1 + 2 * size];
        row[0] = checked(SequenceHash.mix(f.collectives.hash(), f.collectives.length()));
        long[] perPeer = new long[2 * size];
        f.channels.forEach((c, h) -> {
            int slot = (c.receives() ? size : 0) + c.peer();
            perPeer[slot] = SequenceHash.mix(perPeer[slot], c.tag(), h.hash(), h.length());
        });
        for (int slot = 0; slot < perPeer.length; slot++) {
            row[1 + slot] = checked(perPeer[slot]);
        }
        for (Channel c : f.unchecked) {
            row[1 + (c.receives() ? size : 0) + c.peer()] = UNCHECKED;
        }
        return row;
    }

    /** Whether all ranks' rows agree: the same collectives; each rank's sends as their receivers' receives. */
    static boolean agree(long[][] rows) {
        int size = rows.length;
        for (int i = 0; i < size; i++) {
            if (rows[i][0] != rows[0][0]) {
                return false;
            }
            for (int j = 0; j < size; j++) {
                long sends = rows[i][1 + j];
                long receives = rows[j][1 + size + i];
                if (sends != UNCHECKED && receives != UNCHECKED && sends != receives) {
                    return false;
                }
            }
        }
        return true;
    }

    private static long checked(long h) {
        return h == UNCHECKED ? h + 1 : h;
    }

    /** Adds the messages of {@code items} to {@code channels}; returns the hash of their collectives. */
    private static SequenceHash walk(List<ScheduleItem> items, Map<Channel, SequenceHash> channels,
                                     Set<Channel> unchecked) {
        SequenceHash coll = SequenceHash.EMPTY;
        for (ScheduleItem item : items) {
            switch (item) {
                case CommStep s when s.isCollective() -> coll = coll.then(SequenceHash.of(s.collectiveKey()));
                case CommStep s -> channels.merge(Channel.of(s), SequenceHash.of(s.messageKey()), SequenceHash::then);
                case Repeat r -> {
                    Map<Channel, SequenceHash> body = new TreeMap<>();
                    SequenceHash bodyColl = walk(r.body(), body, unchecked);
                    coll = coll.then(bodyColl.repeat(r.times()));
                    body.forEach((c, h) -> channels.merge(c, h.repeat(r.times()), SequenceHash::then));
                }
                case Branch b -> {
                    Map<Channel, SequenceHash> ignored = new TreeMap<>();
                    SequenceHash t = walk(b.whenTrue(), ignored, unchecked);
                    SequenceHash f = walk(b.whenFalse(), ignored, unchecked);
                    unchecked.addAll(ignored.keySet());
                    coll = coll.then(t.equals(f) ? t : SequenceHash.of(branchKey(t.hash(), f.hash())));
                }
            }
        }
        return coll;
    }

    /** The element a data-dependent branch stands as in the sequence of collectives. */
    static long branchKey(long whenTrue, long whenFalse) {
        return SequenceHash.mix(0x636F6E64L, whenTrue, whenFalse);
    }

    /** The hash of the collectives of {@code items}, as {@link #row} computes it. */
    static SequenceHash collectives(List<ScheduleItem> items) {
        return walk(items, new TreeMap<>(), new HashSet<>());
    }
}
