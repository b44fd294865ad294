package dev.weft.backends.comm.fake;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * One rank's point-to-point matching queues on one communicator, as in MPI: messages that arrived before a
 * matching receive was posted, and posted receives still waiting for a message, both in order. A message matches
 * the first posted receive with its source and tag, and a receive the first such message, so messages between
 * one pair of ranks never overtake each other. Guarded by the world's lock.
 */
final class Mailbox {
    private final ArrayDeque<Message> unexpected = new ArrayDeque<>();
    private final ArrayDeque<FakeRequest> posted = new ArrayDeque<>();

    void deliver(Message m) {
        for (Iterator<FakeRequest> it = posted.iterator(); it.hasNext(); ) {
            FakeRequest r = it.next();
            if (r.matches(m)) {
                it.remove();
                match(r, m);
                return;
            }
        }
        unexpected.addLast(m);
    }

    void post(FakeRequest r) {
        for (Iterator<Message> it = unexpected.iterator(); it.hasNext(); ) {
            Message m = it.next();
            if (r.matches(m)) {
                it.remove();
                match(r, m);
                return;
            }
        }
        posted.addLast(r);
    }

    /** Completes the receive with {@code m}, and the send of {@code m} with it: the send was matched. */
    private static void match(FakeRequest receive, Message m) {
        receive.match(m);
        m.send().match(m);
    }
}
