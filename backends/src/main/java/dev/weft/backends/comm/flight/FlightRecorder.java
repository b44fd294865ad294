package dev.weft.backends.comm.flight;

import dev.weft.prim.CommOp;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One rank's ring of its most recent communication operations (all its communicators), for dumps when the rank
 * hangs or the job ends abnormally. Recording allocates nothing: each operation overwrites the oldest slot with a
 * few plain stores, read at a dump by another thread (the watchdog, a shutdown hook) without stopping the rank.
 *
 * <p>The rank's thread is the only writer, unless the thread level lets several threads communicate at once
 * ({@code multiple}): then sequence numbers are claimed atomically. The writer uses no fences (releasing stores
 * cost ~3 ns more per operation, as much as the rest of the recording). A reader takes a slot only if its sequence
 * number is the expected one before and after reading its fields, and drops the slots the writer may have reused
 * meanwhile; a dump taken while the rank communicates may still miss the newest operation, or a state change racing
 * with it. Dumps are taken when the rank is blocked, or at its end, when none of this arises.
 *
 * <p>A compiled program's calls are {@link #register}ed once and recorded by number: a slot then gets no reference
 * store, which under G1 costs a fence each time (the ring is old, the call elsewhere).
 */
public final class FlightRecorder {
    private static final VarHandle NEXT;

    static {
        try {
            NEXT = MethodHandles.lookup().findVarHandle(FlightRecorder.class, "next", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final FlightState[] STATES = FlightState.values();
    private static final int STARTED = FlightState.STARTED.ordinal();

    /**
     * One recorded operation, identified by {@code seq} (0 while the slot is empty). Fields a begin does not need
     * keep stale values rather than cost stores: {@code call} when {@code registered} names the call, {@code end}
     * until the operation ends.
     */
    private static final class Slot {
        long seq;
        /** The call, unless {@code registered} is a registered call's number (not -1). */
        FlightCall call;
        int registered;
        /** The collective's number, or for a wait the posting's sequence number; else -1. */
        long ref;
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
    /** The registered calls, by number; replaced (never changed) as calls are added. */
    private volatile FlightCall[] registry = new FlightCall[0];
    /** The most calls {@link #register} keeps. */
    static final int REGISTERED = 1 << 14;
    /** The numbers of the registered calls; guarded by this recorder. */
    private final Map<FlightCall, Integer> numbers = new HashMap<>();

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
     * Registers a call that will be recorded many times; returns its number for {@link #begin(int, long)}. A call
     * equal to one registered before gets that one's number: eager calls bind each time they run, and a loop of
     * them must neither grow the registry nor copy it each time. Returns -1 once {@value #REGISTERED} calls are
     * registered (a program binding ever new shapes): the caller then records the call with {@link #begin(FlightCall,
     * long, long, FlightState)}, so the registry stays bounded.
     */
    public synchronized int register(FlightCall call) {
        Integer known = numbers.get(call);
        if (known != null) {
            return known;
        }
        if (registry.length >= REGISTERED) {
            return -1;
        }
        numbers.put(call, registry.length);
        FlightCall[] r = Arrays.copyOf(registry, registry.length + 1);
        r[r.length - 1] = call;
        registry = r;
        return r.length - 1;
    }

    /**
     * Records that registered call {@code registered} starts (state {@link FlightState#STARTED}); returns its
     * sequence number for {@link #end}.
     *
     * @param collective the collective's number on its communicator, or -1
     */
    public long begin(int registered, long collective) {
        long seq = concurrent ? (long) NEXT.getAndAdd(this, 1L) + 1 : ++next;
        Slot s = ring[(int) seq & mask];
        s.registered = registered;
        s.ref = collective;
        s.state = STARTED;
        s.start = FlightClock.now();
        s.seq = seq;
        return seq;
    }

    /**
     * Records that {@code call} starts (state {@link FlightState#STARTED}) or is posted; returns its sequence
     * number for {@link #end}.
     *
     * @param collective the collective's number on its communicator, or -1
     * @param posted     for a wait, the sequence number of the request's {@code isend}/{@code irecv}; else -1
     */
    public long begin(FlightCall call, long collective, long posted, FlightState state) {
        return fill(call, -1, collective, posted, state);
    }

    private long fill(FlightCall call, int registered, long collective, long posted, FlightState state) {
        long seq = concurrent ? (long) NEXT.getAndAdd(this, 1L) + 1 : ++next;
        Slot s = ring[(int) seq & mask];
        s.call = call;
        s.registered = -1;
        s.ref = posted >= 0 ? posted : collective;
        s.state = state.ordinal();
        s.start = FlightClock.now();
        s.seq = seq;
        return seq;
    }

    /** Records that operation {@code seq} ended in {@code state}; a no-op once the ring has overwritten it. */
    public void end(long seq, FlightState state) {
        Slot s = ring[(int) seq & mask];
        if (s.seq == seq) {
            s.end = FlightClock.now();
            s.state = state.ordinal();
        }
    }

    /**
     * Forgets operation {@code seq}, which ended as though it had not run (a schedule check that passed: the
     * operation it checked is recorded next), when no operation began after it; else records it completed.
     */
    public void retract(long seq) {
        Slot s = ring[(int) seq & mask];
        if (s.seq == seq && NEXT.compareAndSet(this, seq, seq - 1)) {
            s.seq = 0;
        } else {
            completed(seq);
        }
    }

    /** Records that operation {@code seq} completed. */
    public void completed(long seq) {
        end(seq, FlightState.COMPLETED);
    }

    /**
     * The start time of the longest-running {@link FlightState#STARTED} operation, or -1 if none; allocates nothing
     * (the watchdog calls it ten times a second).
     */
    long oldestStarted() {
        long oldest = -1;
        for (Slot s : ring) {
            VarHandle.acquireFence();
            long seq = s.seq;
            int state = s.state;
            long start = s.start;
            VarHandle.acquireFence();
            if (seq > 0 && s.seq == seq && state == STARTED && (oldest < 0 || start < oldest)) {
                oldest = start;
            }
        }
        return oldest;
    }

    /** The operations kept, oldest first. */
    public List<FlightEntry> snapshot() {
        long last = (long) NEXT.getVolatile(this);
        FlightCall[] calls = registry;
        List<FlightEntry> entries = new ArrayList<>();
        for (long seq = Math.max(1, last - mask); seq <= last; seq++) {
            Slot s = ring[(int) seq & mask];
            VarHandle.acquireFence();
            if (s.seq != seq) {
                continue;
            }
            int registered = s.registered;
            FlightCall call = registered < 0 ? s.call : registered < calls.length ? calls[registered] : null;
            FlightState state = STATES[s.state];
            long ref = s.ref;
            boolean wait = call != null && (call.op() == CommOp.Kind.WAIT_ISEND || call.op() == CommOp.Kind.WAIT_IRECV
                    || call.op() == CommOp.Kind.WAIT_COLLECTIVE);
            boolean ended = state == FlightState.COMPLETED || state == FlightState.FAILED;
            FlightEntry e = new FlightEntry(seq, call, wait ? -1 : ref, wait ? ref : -1, state, s.start,
                    ended ? s.end : -1);
            VarHandle.acquireFence();
            if (s.seq == seq && e.call() != null) {
                entries.add(e);
            }
        }
        long reused = (long) NEXT.getVolatile(this) - ring.length;
        entries.removeIf(e -> e.seq() <= reused);
        return entries;
    }
}
