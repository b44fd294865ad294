package dev.weft.backends.comm;

import dev.weft.spi.Setting;
import dev.weft.spi.SourceLocation;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.SequencedSet;
import java.util.function.Supplier;

/**
 * The non-blocking requests one rank has started ({@code isend}, {@code irecv}) and not yet waited, on all of its
 * communicators but Weft's private duplicates, in the order started. Each holds its buffer (the fake runtime also a
 * copy of a sent message, MPI its own resources) until waited, so their number is bounded by
 * {@link Setting#MAX_REQUESTS} (default 65536). Starting one more fails before anything is
 * communicated, naming the first request still outstanding, whose line is usually the one missing its wait.
 * At the rank's normal end the runtime reports those never waited ({@link #neverWaited}). Thread-safe.
 */
public final class OutstandingRequests {
    /** How many of the requests never waited the report names. */
    private static final int NAMED = 3;

    private final SequencedSet<PendingRequest> started = new LinkedHashSet<>();
    /** Read at the first request, so that a program may set the property before it communicates. */
    private long limit;

    /**
     * Starts a request with {@code post} unless this rank already has as many outstanding as the limit allows.
     *
     * @param op   the operation ({@code isend}, {@code irecv}), for the message
     * @param comm the communicator's name, for the message
     * @throws CommException at {@code where}, naming the first request still outstanding, when at the limit
     */
    public <R extends PendingRequest> R start(String op, String comm, SourceLocation where, Supplier<R> post) {
        if (comm.endsWith(Communicator.PRIVATE_SUFFIX)) {
            // the schedule check's envelopes, each waited with the user's request it describes
            return post.get();
        }
        synchronized (this) {
            if (limit == 0) {
                limit = Setting.MAX_REQUESTS.number();
            }
            if (started.size() >= limit) {
                throw new CommException(where, String.format("%s on '%s': %d requests of this rank are started and"
                        + " not waited, as many as -D%s or %s allows (default %s); the first still outstanding is %s:"
                        + " wait for every request (Comm.wait, Comm.waitAll), or raise the limit", op, comm,
                        started.size(), Setting.MAX_REQUESTS.property(), Setting.MAX_REQUESTS.env(),
                        Setting.MAX_REQUESTS.defaultValue(), started.getFirst().describe()));
            }
        }
        R r = post.get();
        synchronized (this) {
            started.add(r);
        }
        return r;
    }

    /** Records that {@code r} was waited (its one wait has begun); it no longer counts. */
    public synchronized void waited(PendingRequest r) {
        started.remove(r);
    }

    /**
     * A line reporting the requests started and never waited, naming the first few with their source lines, or
     * null when every request was waited.
     */
    public synchronized String neverWaited() {
        if (started.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder().append(started.size())
                .append(started.size() == 1 ? " request was" : " requests were").append(" started and never waited: ");
        Iterator<PendingRequest> it = started.iterator();
        for (int i = 0; i < NAMED && it.hasNext(); i++) {
            sb.append(i == 0 ? "" : "; ").append(it.next().describe());
        }
        if (started.size() > NAMED) {
            sb.append("; and ").append(started.size() - NAMED).append(" more");
        }
        return sb.append(" (a request keeps its buffer, and under MPI the library's resources, until waited: wait"
                + " for each with Comm.wait or Comm.waitAll)").toString();
    }
}
