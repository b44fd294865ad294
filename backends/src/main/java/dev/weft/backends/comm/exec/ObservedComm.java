package dev.weft.backends.comm.exec;

import dev.weft.backends.comm.Communicator;
import dev.weft.backends.timeline.CommEvent;
import dev.weft.backends.timeline.EventSite;
import dev.weft.backends.timeline.JsonObjectText;
import dev.weft.backends.timeline.Timeline;
import dev.weft.prim.CommOp;
import java.lang.foreign.MemorySegment;
import jdk.jfr.FlightRecorder;

/**
 * A communication as it runs, observed: each run is a JFR {@link CommEvent} when a recording wants one, and a
 * {@code comm} event of the {@link Timeline} when that is on. With neither, what remains per run is the check of
 * a constant and of a volatile flag (JFR not initialised), or of an event the JIT folds away.
 */
final class ObservedComm {
    private ObservedComm() {
    }

    /** {@code pair}, the operation of {@code call}, observed; {@code compiled} says whether a program runs it. */
    static Communicator.BufferPairCall pair(CommCall call, Communicator.BufferPairCall pair, boolean compiled) {
        return new ObservedPair(call, pair, compiled, Timeline.ENABLED ? site(call, compiled) : null);
    }

    /**
     * A pair call observed. A record with the unobserved case first rather than a lambda: before the JIT has
     * compiled it, a call of a compiled loop interprets this one method and JFR's check, then the pair call; C2
     * folds its fields like a lambda's when a compiled loop holds it as a constant.
     */
    private record ObservedPair(CommCall call, Communicator.BufferPairCall pair, boolean compiled, EventSite site)
            implements Communicator.BufferPairCall {
        @Override
        public void accept(MemorySegment in, MemorySegment out) {
            if (!Timeline.ENABLED && !FlightRecorder.isInitialized()) {
                pair.accept(in, out);
                return;
            }
            CommEvent e = FlightRecorder.isInitialized() ? begin() : null;
            long start = Timeline.ENABLED ? System.nanoTime() : 0;
            pair.accept(in, out);
            if (Timeline.ENABLED) {
                Timeline.record(site, start);
            }
            if (e != null) {
                commit(e, call, compiled);
            }
        }
    }

    /**
     * {@code action}, the operation of {@code call}, observed; {@code compiled} says whether a program runs it. A
     * {@code comm_rank} communicates nothing and is left as it is.
     */
    static CommCall.Action action(CommCall call, CommCall.Action action, boolean compiled) {
        if (call.op() instanceof CommOp.Rank) {
            return action;
        }
        EventSite site = Timeline.ENABLED ? site(call, compiled) : null;
        return (in, out) -> {
            CommEvent e = FlightRecorder.isInitialized() ? begin() : null;
            long start = Timeline.ENABLED ? System.nanoTime() : 0;
            action.run(in, out);
            if (Timeline.ENABLED) {
                Timeline.record(site, start);
            }
            if (e != null) {
                commit(e, call, compiled);
            }
        };
    }

    /**
     * A begun event. Only called once JFR is initialised (a recording was started, at launch or later): loading
     * an event class initialises JFR, which costs a program that records nothing ~0.2-0.4 s at its first
     * communication.
     */
    private static CommEvent begin() {
        CommEvent e = new CommEvent();
        e.begin();
        return e;
    }

    private static void commit(CommEvent e, CommCall call, boolean compiled) {
        e.end();
        if (e.shouldCommit()) {
            e.op = call.op().kind().label();
            e.communicator = call.comm().name();
            e.rank = call.comm().rank();
            e.peer = peer(call);
            e.tag = tag(call.op());
            e.dtype = call.data() == null ? null : call.data().dtype().specName();
            e.shape = call.data() == null ? null : call.data().shape().toString();
            e.bytes = bytes(call);
            e.compiled = compiled;
            e.sourceLine = call.where().toString();
            e.commit();
        }
    }

    /** The timeline's description of {@code call}. */
    private static EventSite site(CommCall call, boolean compiled) {
        JsonObjectText args = new JsonObjectText().field("op", call.op().kind().label())
                .field("communicator", call.comm().name()).field("rank", call.comm().rank());
        int peer = peer(call);
        if (peer >= 0) {
            args.field(call.op() instanceof CommOp.Rooted ? "root" : "peer", peer);
        }
        if (call.op() instanceof CommOp.SendRecv s) {
            args.field("source", s.source());
        }
        int tag = tag(call.op());
        if (tag >= 0) {
            args.field("tag", tag);
        }
        if (call.reduce() != null) {
            args.field("reduce", call.reduce().name());
        }
        if (call.data() != null) {
            args.field("dtype", call.data().dtype().specName()).field("shape", call.data().shape().toString());
        }
        args.field("bytes", bytes(call)).field("compiled", compiled ? "yes" : "no")
                .field("line", call.where().toString());
        return new EventSite(EventSite.COMM, call.op().kind().label(), args.toString());
    }

    /**
     * The destination or source of a point-to-point operation ({@code sendrecv}'s destination), the root of a
     * rooted collective, else -1 (also a {@code recv_any}'s {@code ANY_SOURCE}, which is -1).
     */
    private static int peer(CommCall call) {
        return switch (call.op()) {
            case CommOp.Send s -> s.dest();
            case CommOp.Recv r -> r.source();
            case CommOp.RecvAny r -> r.source();
            case CommOp.Start s -> s.peer();
            case CommOp.SendRecv s -> s.dest();
            case CommOp.Rooted r -> r.root();
            case CommOp.Rank r -> -1;
            case CommOp.Wait w -> -1;
            case CommOp.CollectiveWait w -> -1;
            case CommOp.Collective c -> -1;
        };
    }

    /** The tag of a point-to-point operation ({@code sendrecv}'s send tag), else -1. */
    private static int tag(CommOp op) {
        return switch (op) {
            case CommOp.Send s -> s.tag();
            case CommOp.Recv r -> r.tag();
            case CommOp.RecvAny r -> r.tag();
            case CommOp.Start s -> s.tag();
            case CommOp.SendRecv s -> s.sendTag();
            case CommOp.Rank r -> -1;
            case CommOp.Wait w -> -1;
            case CommOp.CollectiveWait w -> -1;
            case CommOp.Collective c -> -1;
        };
    }

    /** The bytes this rank sends or receives: its operand's, plus what a {@code sendrecv} receives. */
    private static long bytes(CommCall call) {
        return (call.data() == null ? 0 : call.data().byteSize())
                + (call.received() == null ? 0 : call.received().byteSize());
    }
}
