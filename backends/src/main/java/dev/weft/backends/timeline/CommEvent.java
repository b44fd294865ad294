package dev.weft.backends.timeline;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A JDK Flight Recorder event ({@code dev.weft.Comm}) for each communication a rank runs, eager or compiled, so
 * that JDK Mission Control shows them beside the JVM's own events. Fields are filled only when a recording wants
 * the event ({@link #shouldCommit}); until JFR is initialised (a recording started, at launch or later) none is
 * created, since loading this class initialises JFR, and with no recording the JIT folds one away.
 * No stack trace is taken (it would show the executor, and cost microseconds): {@link #sourceLine} names the user's
 * line.
 */
@Name("dev.weft.Comm")
@Label("Weft Communication")
@Category("Weft")
@Description("One communication operation of a Weft rank: a collective, a point-to-point transfer or a wait")
@StackTrace(false)
public final class CommEvent extends Event {
    @Label("Operation")
    @Description("allreduce, bcast, send, irecv, wait, ...")
    public String op;

    @Label("Communicator")
    public String communicator;

    @Label("Rank")
    @Description("This rank's index in the communicator")
    public int rank;

    @Label("Peer")
    @Description("The destination or source of a point-to-point operation, the root of a rooted collective; -1 if none")
    public int peer;

    @Label("Tag")
    @Description("The tag of a point-to-point operation; -1 if none")
    public int tag;

    @Label("Data Type")
    public String dtype;

    @Label("Shape")
    public String shape;

    @Label("Bytes")
    @DataAmount
    public long bytes;

    @Label("Compiled")
    @Description("Whether the operation ran inside a compiled program (else eagerly)")
    public boolean compiled;

    @Label("Source Line")
    @Description("The user's line that issued the operation")
    public String sourceLine;
}
