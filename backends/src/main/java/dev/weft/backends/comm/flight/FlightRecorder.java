package dev.weft.backends.comm.flight;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank's ring of its most recent communication operations (all its communicators), for dumps when the rank
 * hangs or the job ends abnormally. Recording allocates nothing: each operation overwrites the oldest slot with a
 * few stores, read at a dump by another thread (the watchdog, a shutdown hook) without stopping the rank.
 *
 * <p>The rank's thread is the only writer, unless the thread level lets several threads communicate at once
 * ({@code multiple}): then slots are claimed atomically. A reader takes a slot only if its sequence number is the
 * same before and after reading its fields, so an entry overwritten meanwhile is left out, never torn; a state
 * change (completed) racing with the read may be missed.
 */
public final class FlightRecorder {
    private static final VarHandle NEXT;
    private static final VarHandle SLOT_SEQ;
    private static final VarHandle SLOT_STATE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            NEXT = l.findVarHandle(FlightRecorder.class, "next", long.class);
            SLOT_SEQ = l.findVarHandle(Slot.class, "seq", long.class);
            SLOT_STATE = l.findVarHandle(Slot.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final FlightState[] STATES = FlightState.values();

    /** One recorded operation; {@code seq} is 0 while the slot is empty or being rewritten. */
    private static final class Slot {
        long seq;
        FlightCall call;
        long collective;
        long posted;
        int state;
        long start;
        long end;
    }

    private final int rank;
    private final int size;
    private final Slot[] ring;
    private final int mask;
    private final boolean concurrent;
    /** The last sequence number handed out. */
    private long next;

    /**
     * A recorder of world rank {@code rank} of {@code size} keeping the last {@code capacity} operations (rounded
     * up to a power of two).
     *
     * @param concurrent whether several threads of the rank may communicate at once
     */
    public FlightRecorder(int rank, int size, int capacity, boolean concurrent) {
        if (capacity < 1 || capacity > 1 << 20) {
            throw new IllegalArgumentException("flight recorder capacity must be in [1, 2^20], got " + capacity);
        }
        int n = Integer.highestOneBit(capacity);
        n = n < capacity ? n << 1 : n;
        this.rank = rank;
        this.size = size;
        this.ring = new Slot[n];
        for (int i = 0; i < n; i++) {
            ring[i] = new Slot();
        }
        this.mask = n - 1;
        this.concurrent = concurrent;
    }

    /** The world rank recorded. */
    public int rank() {
        return rank;
    }

    /** The world's size. */
    public int size() {
        return size;
    }

    /** How many operations the ring keeps. */
    public int capacity() {
        return ring.length;
    }

    /**
     * Records that {@code call} starts (state {@link FlightState#STARTED}) or is posted; returns its sequence
     * number for {@link #end}.
     *
     * @param collective the collective's number on its communicator, or -1
     * @param posted     for a wait, the sequence number of the request's {@code isend}/{@code irecv}; else -1
     */
    public long begin(FlightCall call, long collective, long posted, FlightState state) {
        long seq = concurrent ? (long) NEXT.getAndAdd(this, 1L) + 1 : ++next;
        Slot s = ring[(int) seq & mask];
        s.seq = 0;
        VarHandle.storeStoreFence();
        s.call = call;
        s.collective = collective;
        s.posted = posted;
        s.state = state.ordinal();
        s.start = FlightClock.now();
        s.end = -1;
        SLOT_SEQ.setRelease(s, seq);
        return seq;
    }

    /** Records that operation {@code seq} ended in {@code state}; a no-op once the ring has overwritten it. */
    public void end(long seq, FlightState state) {
        Slot s = ring[(int) seq & mask];
        if (s.seq == seq) {
            s.end = FlightClock.now();
            SLOT_STATE.setRelease(s, state.ordinal());
        }
    }

    /** Records that operation {@code seq} completed. */
    public void completed(long seq) {
        end(seq, FlightState.COMPLETED);
    }

    /** The start time of the longest-running {@link FlightState#STARTED} operation, or -1 if none. */
    long oldestStarted() {
        long oldest = -1;
        for (Slot s : ring) {
            long seq = (long) SLOT_SEQ.getAcquire(s);
            int state = (int) SLOT_STATE.getAcquire(s);
            long start = s.start;
            VarHandle.loadLoadFence();
            if (seq > 0 && state == FlightState.STARTED.ordinal() && (long) SLOT_SEQ.getAcquire(s) == seq
                    && (oldest < 0 || start < oldest)) {
                oldest = start;
            }
        }
        return oldest;
    }

    /** The operations kept, oldest first. */
    public List<FlightEntry> snapshot() {
        long last = (long) NEXT.getAcquire(this);
        List<FlightEntry> entries = new ArrayList<>();
        for (long seq = Math.max(1, last - mask); seq <= last; seq++) {
            Slot s = ring[(int) seq & mask];
            if ((long) SLOT_SEQ.getAcquire(s) != seq) {
                continue;
            }
            int state = (int) SLOT_STATE.getAcquire(s);
            FlightEntry e = new FlightEntry(seq, s.call, s.collective, s.posted, STATES[state], s.start,
                    s.end);
            VarHandle.loadLoadFence();
            if ((long) SLOT_SEQ.getAcquire(s) == seq && e.call() != null) {
                entries.add(e);
            }
        }
        return entries;
    }
}
