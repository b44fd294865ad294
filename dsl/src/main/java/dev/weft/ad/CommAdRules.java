package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.Effect;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * JVP, transpose and variance rules of the communication primitives, under JAX's varying/invariant rule: a value
 * is <em>invariant</em> over a communicator when it is the same on every rank by construction ({@link Variance}),
 * and an invariant result's cotangent counts once. The tangent of a collective is the same collective on the
 * tangents (zeros on a rank whose operand has none). The collectives whose result is invariant transpose without
 * communicating, as JAX's {@code psum} does: allreduce SUM to the identity, allgather and allgatherv to this rank's
 * block of the cotangent, bcast to the cotangent on the root and zeros elsewhere; their operand must vary, and an
 * invariant one is first made varying (JAX's {@code pvary}, by the recorder), whose transpose is the allreduce SUM. The others map
 * varying values to varying values and transpose to the adjoint collective: reduce-scatter SUM to allgather, reduce
 * SUM to a bcast from the root, alltoall to itself, gatherv to a scatterv from the root and back, alltoallv to an
 * alltoallv with the send and receive counts swapped, and a message to the message back (same communicator and tag,
 * the other direction). MAX and MIN share the tangent equally among the ranks holding the extremum; PROD divides by
 * the operand (NaN where it is 0). Custom reduce ops have no derivative. Nonblocking messages transpose to
 * nonblocking messages back, started where the waits were and waited where the messages started. A nonblocking
 * collective differentiates exactly as its blocking collective, at its wait: the tangent (and so the transposed)
 * collective runs there, blocking.
 */
final class CommAdRules {
    private CommAdRules() {
    }

    static void register() {
        AdRules.jvp(CommPrims.ALLREDUCE, (p, x, t, out) -> {
            ReduceOp op = p.op();
            Tensor y = out.getFirst(), tx = t.get(0);
            if (op == ReduceOp.SUM) {
                return List.of(allreduceSum(p, tx));
            }
            if (op == ReduceOp.PROD) {
                return List.of(allreduceSum(p, tx.mul(y.div(x.get(0)))));
            }
            if (op == ReduceOp.MAX || op == ReduceOp.MIN) {
                Tensor hit = x.get(0).eq(y).cast(y.dtype());
                Tensor count = allreduceSum(p, hit);
                return List.of(allreduceSum(p, tx.mul(hit)).div(count));
            }
            throw notDifferentiable(op);
        });
        AdRules.transpose(CommPrims.ALLREDUCE, (p, ct, k, in) -> List.of(Pvary.explicit(ct.get(0), p.handle())));

        AdRules.jvp(CommPrims.ALLGATHER, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.ALLGATHER, (p, ct, k, in) -> List.of(ownBlock(p,
                Pvary.explicit(ct.get(0), p.handle()), in.get(0))));

        // as allgather's, on uneven blocks: this rank's counts[rank] rows, from after the ranks before it
        AdRules.jvp(CommPrims.ALLGATHERV, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.ALLGATHERV, (p, ct, k, in) -> List.of(Pvary.explicit(ct.get(0), p.handle())
                .slice(0, p.offset(p.handle().rank()), p.offset(p.handle().rank() + 1))));

        // a non-root rank's gatherv result, and so its cotangent, is empty: every rank pads its cotangent to the whole
        // rows (the root by none), so that all transpose alike, and scatters it back from the root
        AdRules.jvp(CommPrims.GATHERV, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.GATHERV, (p, ct, k, in) -> List.of(bind(new CommOp.ScatterV(p.comm(), p.counts(),
                p.root()), toRows(ct.get(0), p.total()))));
        AdRules.jvp(CommPrims.SCATTERV, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.SCATTERV, (p, ct, k, in) -> List.of(toRows(bind(new CommOp.GatherV(p.comm(),
                p.counts(), p.root()), ct.get(0)), p.total())));
        AdRules.jvp(CommPrims.ALLTOALLV, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.ALLTOALLV, (p, ct, k, in) -> List.of(bind(new CommOp.AllToAllV(p.comm(),
                p.recvCounts(), p.sendCounts()), ct.get(0))));

        AdRules.jvp(CommPrims.REDUCE_SCATTER, (p, x, t, out) -> {
            if (p.op() != ReduceOp.SUM) {
                throw notDifferentiable(p.op());
            }
            return List.of(bind(p, t.get(0)));
        });
        AdRules.transpose(CommPrims.REDUCE_SCATTER, (p, ct, k, in) -> List.of(bind(new CommOp.AllGather(p.comm()),
                ct.get(0))));

        AdRules.jvp(CommPrims.BCAST, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        // every rank makes the cotangent varying, so that transposing this again is a bcast on every rank
        AdRules.transpose(CommPrims.BCAST, (p, ct, k, in) -> List.of(Pvary.explicit(ct.get(0), p.handle())
                .mul(p.handle().rank() == p.root() ? 1 : 0)));

        // The root's result is the sum; another rank's is its own operand: the tangent of either is reduce's.
        AdRules.jvp(CommPrims.REDUCE, (p, x, t, out) -> {
            if (p.op() != ReduceOp.SUM) {
                throw notDifferentiable(p.op());
            }
            return List.of(bind(p, t.get(0)));
        });
        AdRules.transpose(CommPrims.REDUCE, (p, ct, k, in) -> {
            Tensor fromRoot = bind(new CommOp.Bcast(p.comm(), p.root()), ct.get(0));
            return List.of(p.handle().rank() == p.root() ? fromRoot : fromRoot.add(ct.get(0)));
        });

        AdRules.jvp(CommPrims.ALLTOALL, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.ALLTOALL, (p, ct, k, in) -> List.of(bind(p, ct.get(0))));

        AdRules.jvp(CommPrims.SEND, (p, x, t, out) -> {
            CommPrims.bind(p, t.get(0));
            return List.of();
        });
        AdRules.transpose(CommPrims.SEND, (p, ct, k, in) -> List.of(bind(
                new CommOp.Recv(p.comm(), p.dest(), p.tag(), in.get(0)))));

        AdRules.jvp(CommPrims.RECV, (p, x, t, out) -> List.of(bind(p)));
        AdRules.transpose(CommPrims.RECV, (p, ct, k, in) -> {
            CommPrims.bind(new CommOp.Send(p.comm(), p.source(), p.tag()), ct.get(0));
            return List.of();
        });

        AdRules.jvp(CommPrims.RECV_ANY, CommAdRules::recvAnyTangent);
        AdRules.transpose(CommPrims.RECV_ANY, (p, ct, k, in) -> {
            CommPrims.bind(new CommOp.Send(p.comm(), p.source(), p.tag()), ct.get(0));
            return List.of();
        });

        AdRules.jvp(CommPrims.SENDRECV, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.SENDRECV, (p, ct, k, in) -> List.of(bind(new CommOp.SendRecv(p.comm(),
                p.source(), p.recvTag(), p.dest(), p.sendTag(), in.get(0)), ct.get(0))));

        // Nonblocking messages: the tangent of a request is the request of the tangent's message. Transposed, the
        // wait (met first, backwards) starts the message back and passes its request, as the cotangent of the
        // request, to the isend or irecv, which waits it: the messages back overlap as the messages did.
        AdRules.jvp(CommPrims.ISEND, (p, x, t, out) -> List.of(bind(p, t.get(0))));
        AdRules.transpose(CommPrims.ISEND, (p, ct, k, in) -> List.of(bind(
                new CommOp.Wait(new CommOp.Irecv(p.comm(), p.dest(), p.tag(), in.get(0))), ct.get(0))));
        AdRules.jvp(CommPrims.IRECV, (p, x, t, out) -> List.of(bind(p)));
        AdRules.transpose(CommPrims.IRECV, (p, ct, k, in) -> {
            CommPrims.bind(new CommOp.Wait(new CommOp.Isend(p.comm(), p.source(), p.tag())), ct.get(0),
                    SENT_BACK.remove(ct.get(0)));
            return List.of();
        });
        AdRules.jvp(CommPrims.WAIT, (p, x, t, out) -> {
            if (t.get(0) == null) {
                throw new WeftException(SourceLocation.capture(), "a request started outside the differentiated"
                        + " function is waited inside it; start and wait it on the same side");
            }
            List<Tensor> tangentOut = CommPrims.bind(p, t.toArray(Tensor[]::new));
            return tangentOut.isEmpty() ? List.of() : List.of(tangentOut.getFirst());
        });
        AdRules.transpose(CommPrims.WAIT, (p, ct, k, in) -> switch (p.start()) {
            case CommOp.Isend s -> Arrays.asList(bind(new CommOp.Irecv(s.comm(), s.dest(), s.tag(), in.get(1))), null);
            case CommOp.Irecv r -> {
                Tensor sent = ct.get(0);
                Tensor back = bind(new CommOp.Isend(r.comm(), r.source(), r.tag()), sent);
                SENT_BACK.put(back, sent);
                yield List.of(back);
            }
        });

        // Nonblocking collectives differentiate as their blocking collective, at the wait: the start gives its request
        // no tangent, and the wait (whose inputs carry the operand and so its tangent) applies the blocking rule.
        for (Primitive<? extends CommOp.CollectiveStart> start : List.of(CommPrims.IALLREDUCE, CommPrims.IALLGATHER,
                CommPrims.IREDUCE_SCATTER, CommPrims.IBCAST, CommPrims.IALLTOALL)) {
            AdRules.jvp(start, (p, x, t, out) -> Collections.singletonList(null));
        }
        AdRules.notDifferentiable(CommPrims.IBARRIER, "it has no tensor operands or results");
        AdRules.jvp(CommPrims.WAIT_COLLECTIVE, (p, x, t, out) -> out.isEmpty() ? List.of()
                : blockingJvp(p.start().blocking(), x.subList(1, x.size()), t.subList(1, t.size()), out));

        AdRules.notDifferentiable(CommPrims.COMM_RANK, "its result is an integer");
        AdRules.notDifferentiable(CommPrims.BARRIER, "it has no tensor operands or results");

        for (Primitive<? extends CommOp> prim : CommPrims.ALL) {
            variance(prim, prim == CommPrims.ALLREDUCE || prim == CommPrims.ALLGATHER || prim == CommPrims.BCAST
                    || prim == CommPrims.ALLGATHERV);
        }
        // a nonblocking collective's result is typed as its blocking collective's
        AdRules.variance(CommPrims.WAIT_COLLECTIVE, (p, in, outputs) -> {
            Variance operands = VarianceRule.meet(in).varyingOver(p.handle());
            boolean invariant = p.start().blocking() instanceof CommOp.AllReduce
                    || p.start().blocking() instanceof CommOp.AllGather || p.start().blocking() instanceof CommOp.Bcast;
            return new VarianceRule.Typing(operands, Collections.nCopies(outputs,
                    invariant ? operands.invariantOver(p.handle()) : operands));
        });
    }

    /** The tangents of {@code blocking} (a collective whose JVP rule is registered) at primals {@code x}. */
    private static <P extends CommOp> List<Tensor> blockingJvp(P blocking, List<Tensor> x, List<Tensor> t,
                                                               List<Tensor> out) {
        @SuppressWarnings("unchecked")
        Primitive<P> prim = (Primitive<P>) CommPrims.of(blocking);
        return AdRules.jvpRule(prim).orElseThrow().jvp(blocking, x, t, out);
    }

    /**
     * Types {@code prim}: its operands must vary over its communicator, and its results are invariant over it
     * ({@code invariant}: every rank gets the same) or vary (each rank its own), as the operands are elsewhere.
     */
    private static <P extends CommOp> void variance(Primitive<P> prim, boolean invariant) {
        AdRules.variance(prim, (p, in, outputs) -> {
            Variance operands = VarianceRule.meet(in).varyingOver(p.handle());
            return new VarianceRule.Typing(operands, Collections.nCopies(outputs,
                    invariant ? operands.invariantOver(p.handle()) : operands));
        });
    }

    /** {@code t} padded with zero rows along axis 0 to {@code rows} rows. */
    private static Tensor toRows(Tensor t, long rows) {
        long[] high = new long[t.rank()];
        high[0] = rows - t.shape()[0];
        return t.pad(new long[t.rank()], high);
    }

    /** This rank's rows of {@code gathered}, an allgather of operands of {@code operand}'s shape. */
    private static Tensor ownBlock(CommOp p, Tensor gathered, Aval operand) {
        long[] dims = operand.shape().dims();
        long rows = dims.length == 0 ? 1 : dims[0];
        long[] start = new long[gathered.shape().length], limit = gathered.shape().clone();
        start[0] = p.handle().rank() * rows;
        limit[0] = start[0] + rows;
        return gathered.slice(start, limit).reshape(dims);
    }

    /**
     * The cotangents sent back by transposed receive-waits, by the request that sends them, until the transposed
     * irecv waits that request (a send's wait takes the sent tensor, keeping its buffer alive).
     */
    private static final Map<Tensor, Tensor> SENT_BACK = Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * The tangent of a receive from a named source, with a named tag or any: the next message of that source,
     * which its sender's tangent rule sends right after the primal with the same tag, and which no other message of
     * the source can overtake. From {@code ANY_SOURCE} the tangent's sender is known only at run time, and a
     * second wildcard receive could take another rank's message: an error naming the line. Reverse mode transposes
     * it to a send back, which needs the tag too.
     */
    private static List<Tensor> recvAnyTangent(CommOp.RecvAny p, List<Tensor> x, List<Tensor> t, List<Tensor> out) {
        if (p.source() == Comm.ANY_SOURCE) {
            throw new WeftException(SourceLocation.capture(), "recvAny from ANY_SOURCE is not differentiable: the"
                    + " tangent must come from the sender of the primal, known only at run time; receive from a"
                    + " named rank, or outside the differentiated function");
        }
        if (p.tag() == Comm.ANY_TAG && Interpreters.current() instanceof LinearRecorder) {
            throw new WeftException(SourceLocation.capture(), "recvAny with ANY_TAG has no transpose: its cotangent"
                    + " would be sent back with a tag known only at run time; name the tag to differentiate in"
                    + " reverse mode");
        }
        return Arrays.asList(CommPrims.bind(p).getFirst(), null);
    }

    /** Whether the tangent of an application must run on every rank whether or not its operands have tangents. */
    static boolean exchangesTangents(Primitive<?> prim, Params params) {
        return AdRules.hasJvp(prim) && prim.effect(params) instanceof Effect.Ordered;
    }

    private static Tensor allreduceSum(CommOp p, Tensor t) {
        return bind(new CommOp.AllReduce(p.comm(), ReduceOp.SUM), t);
    }

    private static WeftException notDifferentiable(ReduceOp op) {
        return new WeftException(SourceLocation.capture(), "the reduce op " + op.name() + " is not differentiable"
                + (op.isCustom() ? " (a custom reduce op has no derivative rule)" : " in this collective")
                + "; differentiate a SUM, or compute it outside the differentiated function");
    }

    private static Tensor bind(CommOp op, Tensor... args) {
        return CommPrims.bind(op, args).getFirst();
    }
}
