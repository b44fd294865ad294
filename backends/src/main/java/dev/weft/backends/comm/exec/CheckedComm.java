package dev.weft.backends.comm.exec;

import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.MessageMismatchException;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.backends.comm.check.CommStep;
import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.ValueLayout;
import java.util.function.Supplier;

/**
 * Communication calls with the schedule check ({@link CommCheck}): a collective is checked with the other ranks
 * before it runs, a message travels with its envelope and a receive compares it before taking the message. Eager
 * calls and compiled programs bind the same ones, so both are checked alike.
 */
final class CheckedComm {
    private CheckedComm() {
    }

    /** {@code pair}, the collective or {@code sendrecv} of {@code call}, checked. */
    static Communicator.BufferPairCall pair(CommCall call, Communicator.BufferPairCall pair) {
        CommCheck check = CommCheck.of(call.comm());
        SourceLocation where = call.where();
        return switch (call.op()) {
            case CommOp.SendRecv(var c, int dest, int sendTag, int source, int recvTag, Aval received) -> {
                CommStep sends = CommStep.message(call.op(), false, call.data(), dest, sendTag, where);
                CommStep receives = CommStep.message(call.op(), true, received, source, recvTag, where);
                yield (in, out) -> {
                    MessageMismatchException failed = null;
                    try {
                        pair.accept(in, out);
                    } catch (MessageMismatchException e) {
                        failed = e;
                    }
                    CommCheck.Sent sent = check.envelope(sends, dest, sendTag);
                    CommCheck.Mismatch m;
                    try {
                        m = awaitOr(check.expect(receives, source, recvTag), failed, where);
                    } finally {
                        sent.complete(where);
                    }
                    raise(m, failed);
                };
            }
            case CommOp.Collective c -> {
                CommStep step = CommStep.of(c, call.data(), where);
                yield (in, out) -> {
                    check.collective(step);
                    pair.accept(in, out);
                };
            }
            default -> throw new IllegalArgumentException(call.op().kind() + " is not a pair action");
        };
    }

    /**
     * {@code action}, the barrier, point-to-point operation or nonblocking collective of {@code call}, checked: a
     * collective's start is checked with the other ranks as its blocking collective is.
     */
    static CommCall.Action action(CommCall call, CommCall.Action action) {
        CommCheck check = CommCheck.of(call.comm());
        SourceLocation where = call.where();
        return switch (call.op()) {
            case CommOp.Barrier b -> {
                CommStep step = CommStep.of(b, null, where);
                yield (in, out) -> {
                    check.collective(step);
                    action.run(in, out);
                };
            }
            case CommOp.Send(var c, int dest, int tag) -> {
                CommStep step = CommStep.message(call.op(), false, call.data(), dest, tag, where);
                yield (in, out) -> {
                    action.run(in, out);
                    check.envelope(step, dest, tag).complete(where);
                };
            }
            case CommOp.Isend(var c, int dest, int tag) -> {
                CommStep step = CommStep.message(call.op(), false, call.data(), dest, tag, where);
                yield (in, out) -> {
                    action.run(in, out);
                    RequestTable.wrap(out[0], r -> new CheckedRequest(r, check.envelope(step, dest, tag), null));
                };
            }
            case CommOp.Recv(var c, int source, int tag, var received) -> {
                CommStep step = CommStep.message(call.op(), true, call.data(), source, tag, where);
                yield (in, out) -> receive(() -> action.run(in, out), () -> check.expect(step, source, tag), where);
            }
            case CommOp.RecvAny(var c, int source, int tag, var received) -> {
                // the envelope comes on the channel of the message taken: its sender's, with its tag
                CommStep step = CommStep.message(call.op(), true, call.data(), source, tag, where);
                yield (in, out) -> receive(() -> action.run(in, out), () -> check.expect(step,
                        out[1].get(ValueLayout.JAVA_INT, 0), out[1].get(ValueLayout.JAVA_INT, 4)), where);
            }
            case CommOp.Irecv(var c, int source, int tag, var received) -> {
                CommStep step = CommStep.message(call.op(), true, call.data(), source, tag, where);
                yield (in, out) -> {
                    action.run(in, out);
                    RequestTable.wrap(out[0], r -> new CheckedRequest(r, null, check.expect(step, source, tag)));
                };
            }
            case CommOp.CollectiveStart c -> {
                CommStep step = CommStep.of(c, call.data(), where);
                yield (in, out) -> {
                    check.collective(step);
                    action.run(in, out);
                };
            }
            case CommOp.CollectiveWait w -> action;
            case CommOp.Wait w -> action;
            case CommOp.Rank r -> action;
            case CommOp.Collective c -> throw new IllegalArgumentException(call.op().kind() + " is a pair action");
            case CommOp.SendRecv s -> throw new IllegalArgumentException(call.op().kind() + " is a pair action");
        };
    }

    /**
     * Takes a message ({@code take}, which blocks as the operation does, so a report of blocked ranks names it, and
     * validates the call first: an invalid call fails as it is), then its envelope ({@code expect}), and raises when
     * they do not match. A message that does not fit (MPI truncates it, fake ranks refuse it) is explained by its
     * envelope.
     */
    static void receive(Runnable take, Supplier<CommCheck.Expected> expect, SourceLocation where) {
        MessageMismatchException failed = null;
        try {
            take.run();
        } catch (MessageMismatchException e) {
            failed = e;
        }
        raise(awaitOr(expect.get(), failed, where), failed);
    }

    /** The envelope's verdict; when it cannot come, {@code failed} (the message's own error) if any. */
    private static CommCheck.Mismatch awaitOr(CommCheck.Expected e, CommException failed, SourceLocation where) {
        try {
            return e.await(where);
        } catch (CommException envelopeLost) {
            if (failed == null) {
                throw envelopeLost;
            }
            failed.addSuppressed(envelopeLost);
            throw failed;
        }
    }

    /** Raises the mismatch {@code m}, which explains {@code failed} if any, else {@code failed}. */
    private static void raise(CommCheck.Mismatch m, CommException failed) {
        if (m != null) {
            throw m.error();
        }
        if (failed != null) {
            throw failed;
        }
    }
}
