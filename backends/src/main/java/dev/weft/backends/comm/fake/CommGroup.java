package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.Communicator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

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
    /** Atomic: a round's computation takes these with the world's lock released. */
    private final AtomicInteger derived = new AtomicInteger();
    private CommGroup checks;

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

    /**
     * The group of this communicator's private duplicate ({@code <name>.weft}), made at the first request: its
     * members share this object in-process, so unlike MPI's {@code MPI_Comm_dup} making it needs no collective.
     */
    CommGroup checks() {
        if (checks == null) {
            checks = new CommGroup(name + Communicator.PRIVATE_SUFFIX, worldRanks);
        }
        return checks;
    }

    /** Numbers the communicators derived from this one ({@code #0}, {@code #1}, ...), for their names. */
    int nextDerivedIndex() {
        return derived.getAndIncrement();
    }
}
