package dev.weft.backends.comm.fake;

import java.util.HashMap;
import java.util.Map;

/**
 * The state one fake communicator's ranks share: its members, each member's mailbox, and the collectives in
 * progress by sequence number. Guarded by the world's lock.
 */
final class CommGroup {
    final String name;
    /** World rank of each rank of this communicator. */
    final int[] worldRanks;
    private final Mailbox[] mailboxes;
    private final Map<Long, CollectiveRound> rounds = new HashMap<>();
    private int derived;

    CommGroup(String name, int[] worldRanks) {
        this.name = name;
        this.worldRanks = worldRanks.clone();
        this.mailboxes = new Mailbox[worldRanks.length];
        for (int i = 0; i < mailboxes.length; i++) {
            mailboxes[i] = new Mailbox();
        }
    }

    int size() {
        return worldRanks.length;
    }

    Mailbox mailbox(int rank) {
        return mailboxes[rank];
    }

    /** The {@code seq}-th collective of this communicator, created by the first rank to call it. */
    CollectiveRound round(long seq) {
        return rounds.computeIfAbsent(seq, s -> new CollectiveRound(this, s));
    }

    void retire(long seq) {
        rounds.remove(seq);
    }

    /** Numbers the communicators derived from this one ({@code #0}, {@code #1}, ...), for their names. */
    int nextDerivedIndex() {
        return derived++;
    }
}
