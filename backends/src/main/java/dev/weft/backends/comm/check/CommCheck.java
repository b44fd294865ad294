package dev.weft.backends.comm.check;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * One rank's check of one communicator (see {@link CheckMode}): it involves only the ranks an operation involves,
 * when the operation runs, so every program MPI accepts passes, whichever ranks compile what and when.
 *
 * <p><b>Collectives.</b> Every rank of a communicator runs the same collectives in the same order, so the
 * {@code k}-th collective of every rank is the same call, and every rank reaches it (or the program hangs under
 * MPI anyway). Before it, the ranks allreduce, with {@code MAX} on the communicator's private duplicate, four longs:
 * the call's key (kind, dtype, count, root, reduce op) and its negation, and a <em>declaration</em> and its
 * negation; the maximum equals the negated maximum of the negations exactly when every rank has the same value.
 * When the keys differ, the ranks allgather what each runs and where, and every rank raises a
 * {@link ScheduleMismatchException} naming them all. A compiled program declares, when it starts, the collectives
 * its schedule runs for sure on the communicator ({@link Declaration}: how many and their hash); when every rank
 * declared the same, they skip the check of those that follow it in the declaration, so a program's run costs one
 * exchange per communicator, however many collectives its loops run. Whether a rank checks its {@code k}-th
 * collective depends only on what all ranks exchanged before, so the ranks never disagree on it and the check
 * never hangs a program that would not hang without it.
 *
 * <p><b>Point-to-point.</b> Each message is followed by an <em>envelope</em> on the private duplicate, with the
 * same peer and tag: its dtype and count, its number on its channel and the sender's call and line. Messages between
 * two ranks with one tag, and so their envelopes, are received in the order they were sent, so the receiver takes
 * the message, then its envelope, compares it with its own call and raises on a mismatch naming both sides (the
 * sender's call completes, as under MPI). A {@code recvAny} from {@code ANY_SOURCE} or with {@code ANY_TAG} takes
 * the envelope of the channel its message came on, the matched source and tag, once it has the message: two messages
 * of one source with one tag match the same receives, wildcard or not, so they are taken in the order sent and their
 * envelopes follow them. Which sender a wildcard matches is not checked (MPI leaves it open).
 *
 * <p>The private duplicate is made with the communicator ({@link Communicator#privateDup}), while all its ranks take
 * part anyway: made at a first check, it would be a collective of its own.
 *
 * <p>{@code WEFT_CHECK} must be the same on every rank. {@code strict} checks every collective, declared or not.
 */
public final class CommCheck {
    private static final Map<Communicator, CommCheck> CHECKS = new WeakHashMap<>();
    private static final LongAdder EXCHANGES = new LongAdder();
    /** The longs each rank contributes to a collective's check: key, -key, declaration, -declaration. */
    private static final int ROW = 4;

    private final Communicator comm;
    /** Guards {@link #dup}; the collective state is guarded by this object, {@link #sent} by itself. */
    private final Object dupLock = new Object();
    private Communicator dup;
    /** Collectives this rank has run (checked or not) on {@link #comm}. */
    private long position;
    /** Collectives still covered by a declaration every rank made. */
    private long skip;
    private Declaration declared;
    /** Messages sent to each {@code (peer, tag)}, for the message numbers of the errors. */
    private final Map<Long, Long> sent = new HashMap<>();
    /** The buffers of {@link #exchange}, kept: an eager collective's check must cost a small allreduce, no more. */
    private final MemorySegment rowIn;
    private final MemorySegment rowOut;

    private CommCheck(Communicator comm) {
        this.comm = comm;
        Arena arena = Arena.ofAuto();
        this.rowIn = arena.allocate(ValueLayout.JAVA_LONG, ROW);
        this.rowOut = arena.allocate(ValueLayout.JAVA_LONG, ROW);
    }

    /** The check of {@code comm} on this rank (communicators compare by identity; each rank has its own). */
    public static CommCheck of(Communicator comm) {
        synchronized (CHECKS) {
            return CHECKS.computeIfAbsent(comm, CommCheck::new);
        }
    }

    /**
     * Whether {@code op} on {@code comm} is checked now: when the communicator has peers, collectives and barriers
     * always (under MPI, ranks whose counts differ corrupt each other's memory, so {@code off} cannot skip them), and
     * point-to-point operations unless the mode is {@code off} (MPI itself refuses a message longer than its receive,
     * and Weft one of another length).
     */
    public static boolean applies(Communicator comm, CommOp op) {
        boolean messages = CheckMode.current() != CheckMode.OFF;
        return comm.size() > 1 && (messages || op instanceof CommOp.Collective || op instanceof CommOp.Barrier);
    }

    /**
     * Checks, where the communicator has peers, that every rank makes a communicator ({@code split} or {@code dup},
     * {@code kind}) from it at this point of its collectives; a collective under MPI like any other.
     */
    public static void creation(Communicator comm, CommOp.Kind kind, SourceLocation where) {
        if (comm.size() > 1) {
            of(comm).collective(CommStep.creation(kind, where));
        }
    }

    /** How many check exchanges of collectives this process has run, for tests and measurements. */
    public static long exchanges() {
        return EXCHANGES.sum();
    }

    /**
     * Records that a compiled program starting now runs {@code d}'s collectives first on this communicator; the
     * next collective carries it. {@link #endProgram} forgets it.
     */
    synchronized void declare(Declaration d) {
        declared = d;
    }

    /** A program ended: what it declared and did not reach (it failed) covers nothing more. */
    synchronized void endProgram(boolean failed) {
        declared = null;
        if (failed) {
            skip = 0;
        }
    }

    /** Checks collective {@code step} with the other ranks before this rank runs it. */
    public synchronized void collective(CommStep step) {
        long k = position++;
        if (skip > 0) {
            skip--;
            declared = null;
            return;
        }
        Declaration d = declared;
        declared = null;
        long key = nonZero(step.collectiveKey());
        long promise = d == null ? 0 : nonZero(d.key());
        long[] row = {key, -key, promise, -promise};
        long[] max = exchange(row, step);
        if (max[0] != -max[1]) {
            throw mismatch(k, step);
        }
        if (promise != 0 && max[2] == promise && -max[3] == promise && CheckMode.current() != CheckMode.STRICT) {
            skip = d.collectives() - 1;
        }
    }

    /**
     * Sends the envelope of {@code step} (a send to {@code dest} with {@code tag}) after its message; the caller
     * completes it with {@link Sent#complete}.
     */
    public Sent envelope(CommStep step, int dest, int tag) {
        long n;
        synchronized (sent) {
            n = sent.merge(channel(dest, tag), 1L, Long::sum) - 1;
        }
        MemorySegment buf = Envelope.encode(step, n);
        return new Sent(dup(step.where()).isend(buf, DType.I64, Envelope.LONGS, dest, tag, step.where()), buf);
    }

    /** Posts the receive of the envelope of the message {@code step} received from {@code src} with {@code tag}. */
    public Expected expect(CommStep step, int src, int tag) {
        MemorySegment buf = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, Envelope.LONGS);
        return new Expected(step, src, tag, dup(step.where()).irecv(buf, DType.I64, Envelope.LONGS, src, tag,
                step.where()), buf);
    }

    /** A sent envelope, kept until its send completed. */
    public final class Sent {
        private final PendingRequest request;
        private final MemorySegment buf;

        private Sent(PendingRequest request, MemorySegment buf) {
            this.request = request;
            this.buf = buf;
        }

        public void complete(SourceLocation where) {
            dup(where).wait(request, where);
            Reference.reachabilityFence(buf);
        }
    }

    /** The envelope a posted receive expects. */
    public final class Expected {
        private final CommStep step;
        private final int src;
        private final int tag;
        private final PendingRequest request;
        private final MemorySegment buf;

        private Expected(CommStep step, int src, int tag, PendingRequest request, MemorySegment buf) {
            this.step = step;
            this.src = src;
            this.tag = tag;
            this.request = request;
            this.buf = buf;
        }

        /**
         * Waits for the envelope and compares it with the receive; returns null when they agree, else the error
         * to raise once the message was taken (so that its sender is not left waiting).
         */
        public Mismatch await(SourceLocation where) {
            dup(where).wait(request, where);
            Envelope e = Envelope.decode(buf);
            if (e.key() == step.messageKey()) {
                return null;
            }
            String message = String.format("schedule mismatch on %s at message #%d from rank %d to rank %d with tag "
                            + "%d: rank %d %s; rank %d %s", comm.name(), e.number(), src, comm.rank(),
                    tag, src, e.sender(), comm.rank(), step.describeAt());
            return new Mismatch(new ScheduleMismatchException(step.where(), message));
        }
    }

    /** A receive whose message does not match it, and the error to raise. */
    public record Mismatch(ScheduleMismatchException error) {
    }

    private static long channel(int peer, int tag) {
        return (long) peer << 32 | (tag & 0xFFFFFFFFL);
    }

    private static long nonZero(long h) {
        return h == 0 || h == Long.MIN_VALUE ? 1 : h;
    }

    private Communicator dup(SourceLocation where) {
        synchronized (dupLock) {
            if (dup == null) {
                dup = comm.privateDup(where);
            }
            return dup;
        }
    }

    /** Allreduces {@code row} (of {@link #ROW} longs) with {@code MAX}; called with this check's lock held. */
    private long[] exchange(long[] row, CommStep step) {
        MemorySegment in = rowIn;
        MemorySegment out = rowOut;
        // Element by element, not MemorySegment.copy or toArray: C2 speculates on the segment classes a bulk copy
        // saw, and in a program's hot loop each other kind of copy failed the speculation, so the whole inlined
        // collective (about 40 KB of code, 0.34 s of C2) was compiled again.
        for (int i = 0; i < row.length; i++) {
            in.setAtIndex(ValueLayout.JAVA_LONG, i, row[i]);
        }
        comm.checkExchange(dup(step.where()), in, out, row.length, step.op(),
                step.data() == null ? null : step.data().dtype(), step.data() == null ? -1 : step.data().shape().size(),
                step.reduce(), step.root(), step.where());
        EXCHANGES.increment();
        long[] max = new long[row.length];
        for (int i = 0; i < max.length; i++) {
            max[i] = out.getAtIndex(ValueLayout.JAVA_LONG, i);
        }
        return max;
    }

    /** Every rank's collective {@code #k} and line, gathered after their keys disagreed, as this rank's error. */
    private ScheduleMismatchException mismatch(long k, CommStep step) {
        String[] all = allgather(step.describeAt(), step.where());
        StringBuilder b = new StringBuilder("schedule mismatch on " + comm.name() + " at collective #" + k + ":");
        for (int r = 0; r < all.length; r++) {
            b.append(r == 0 ? " " : "; ").append("rank ").append(r).append(' ').append(all[r]);
        }
        return new ScheduleMismatchException(step.where(), b.toString());
    }

    private String[] allgather(String text, SourceLocation where) {
        byte[] mine = text.getBytes(StandardCharsets.UTF_8);
        int size = comm.size();
        MemorySegment one = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, 1);
        one.set(ValueLayout.JAVA_LONG, 0, mine.length);
        MemorySegment lengths = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, size);
        dup(where).allgather(one, lengths, DType.I64, 1, where);
        long longest = 0;
        for (int r = 0; r < size; r++) {
            longest = Math.max(longest, lengths.getAtIndex(ValueLayout.JAVA_LONG, r));
        }
        long words = Math.max(1, (longest + Long.BYTES - 1) / Long.BYTES);
        MemorySegment in = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, words);
        MemorySegment.copy(MemorySegment.ofArray(mine), 0, in, 0, mine.length);
        MemorySegment out = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, words * size);
        dup(where).allgather(in, out, DType.I64, words, where);
        String[] all = new String[size];
        for (int r = 0; r < size; r++) {
            long n = lengths.getAtIndex(ValueLayout.JAVA_LONG, r);
            if (n < 0 || n > words * Long.BYTES) {
                throw new CommException(where, "the schedule check received a malformed description from rank " + r);
            }
            all[r] = new String(out.asSlice(r * words * Long.BYTES, n).toArray(ValueLayout.JAVA_BYTE),
                    StandardCharsets.UTF_8);
        }
        return all;
    }
}
