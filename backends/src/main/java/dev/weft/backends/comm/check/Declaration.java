package dev.weft.backends.comm.check;

import dev.weft.backends.comm.Communicator;
import dev.weft.graph.Graph;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The collectives a compiled program runs for sure on one communicator before anything data-dependent: its first
 * {@code collectives} collectives, loops of fixed trip count included, whose keys hash to {@code hash}. A
 * data-dependent {@code cond} whose branches differ ends it.
 */
record Declaration(long collectives, long hash) {
    /** What the ranks compare: count and hash. */
    long key() {
        return SequenceHash.mix(collectives, hash);
    }

    /** The declaration of {@code graph} on each communicator on which it runs at least one collective for sure. */
    static Map<Communicator, Declaration> of(Graph graph) {
        Map<Communicator, Declaration> out = new LinkedHashMap<>();
        ScheduleExtractor.of(graph.body()).forEach((comm, items) -> {
            SequenceHash h = prefix(items, new boolean[1]);
            if (h.length() > 0) {
                out.put(comm, new Declaration(h.length(), h.hash()));
            }
        });
        return out;
    }

    /** The collectives of {@code items} up to the first branch; {@code stopped[0]} says a branch was met. */
    private static SequenceHash prefix(List<ScheduleItem> items, boolean[] stopped) {
        SequenceHash h = SequenceHash.EMPTY;
        for (ScheduleItem item : items) {
            switch (item) {
                case CommStep s when s.isCollective() -> h = h.then(SequenceHash.of(s.collectiveKey()));
                case CommStep s -> {
                }
                case Repeat r -> {
                    SequenceHash body = prefix(r.body(), stopped);
                    h = h.then(stopped[0] ? body : body.repeat(r.times()));
                }
                case Branch b -> stopped[0] = true;
            }
            if (stopped[0]) {
                return h;
            }
        }
        return h;
    }
}
