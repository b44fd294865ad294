package dev.weft.batching;

import dev.weft.Tensor;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import java.util.List;

/**
 * Batching rules of the communication primitives: the batch rides along in the message, one operation carrying
 * every element. Elementwise collectives ({@code allreduce}, {@code reduce}, {@code bcast}) keep the batch axis
 * where it is. Those that join or split axis 0 ({@code allgather}, {@code reduceScatter}, {@code alltoall}, the
 * variable-count ones) take it at axis 1, where their result keeps it. A collective on an unbatched operand stays
 * unbatched, as every rank runs the same program. A point-to-point message always carries the batch, axis first (an unbatched operand is
 * broadcast): its receiver cannot see whether the sender's operand was batched; a {@code recvAny}'s status is one
 * message's, unbatched. A request is never batched; a wait completes a message this level started as batched, and
 * one started outside it as it was. A nonblocking collective batches as its blocking one.
 */
final class CommBatchRules {
    private CommBatchRules() {
    }

    static void register() {
        BatchRules.rule(CommPrims.ALLREDUCE, (p, app) -> BatchRule.Result.of(bind(p, app.arg(0)), app.dim(0)));
        BatchRules.rule(CommPrims.REDUCE, (p, app) -> BatchRule.Result.of(bind(p, app.arg(0)), app.dim(0)));
        BatchRules.rule(CommPrims.BCAST, (p, app) -> BatchRule.Result.of(bind(p, app.arg(0)), app.dim(0)));

        // a batch of scalars gathers to [ranks * batch], rank-major: [ranks, batch] is batched along axis 1
        BatchRules.rule(CommPrims.ALLGATHER, (p, app) -> app.arg(0).rank() == 1
                ? BatchRule.Result.of(bind(p, app.arg(0)).reshape(p.handle().size(), app.size()), 1)
                : BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.REDUCE_SCATTER, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.ALLTOALL, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.ALLGATHERV, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.GATHERV, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.SCATTERV, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));
        BatchRules.rule(CommPrims.ALLTOALLV, (p, app) -> BatchRule.Result.of(bind(p, app.at(0, 1)), 1));

        BatchRules.everyApplication(CommPrims.SEND, (p, app) -> {
            CommPrims.bind(p, app.front(0));
            return new BatchRule.Result(List.of(), List.of());
        });
        BatchRules.everyApplication(CommPrims.RECV, (p, app) -> BatchRule.Result.of(bind(new CommOp.Recv(p.comm(),
                p.source(), p.tag(), BatchAxes.withBatch(p.result(), app.size()))), 0));
        BatchRules.everyApplication(CommPrims.SENDRECV, (p, app) -> BatchRule.Result.of(bind(new CommOp.SendRecv(
                p.comm(), p.dest(), p.sendTag(), p.source(), p.recvTag(), BatchAxes.withBatch(p.result(), app.size())),
                app.front(0)), 0));
        BatchRules.everyApplication(CommPrims.RECV_ANY, (p, app) -> new BatchRule.Result(CommPrims.bind(
                new CommOp.RecvAny(p.comm(), p.source(), p.tag(), BatchAxes.withBatch(p.result(), app.size()))),
                List.of(0, BatchInterpreter.UNBATCHED)));
        BatchRules.everyApplication(CommPrims.ISEND, (p, app) -> {
            Tensor sent = app.front(0);
            Tensor request = bind(p, sent);
            app.level().startedSend(request, sent);
            return BatchRule.Result.of(request, BatchInterpreter.UNBATCHED);
        });
        BatchRules.everyApplication(CommPrims.IRECV, (p, app) -> {
            Tensor request = bind(new CommOp.Irecv(p.comm(), p.source(), p.tag(),
                    BatchAxes.withBatch(p.result(), app.size())));
            app.level().startedReceive(request);
            return BatchRule.Result.of(request, BatchInterpreter.UNBATCHED);
        });
        BatchRules.everyApplication(CommPrims.WAIT, CommBatchRules::waitFor);

        // A nonblocking collective batches as its blocking collective: the start moves the batch axis as that would
        // (its request unbatched), the wait moves its operand alike and types the result so.
        BatchRules.rule(CommPrims.IALLREDUCE, CommBatchRules::start);
        BatchRules.rule(CommPrims.IALLGATHER, CommBatchRules::start);
        BatchRules.rule(CommPrims.IREDUCE_SCATTER, CommBatchRules::start);
        BatchRules.rule(CommPrims.IBCAST, CommBatchRules::start);
        BatchRules.rule(CommPrims.IALLTOALL, CommBatchRules::start);
        BatchRules.unbatched(CommPrims.IBARRIER, "it has no operands");
        BatchRules.rule(CommPrims.WAIT_COLLECTIVE, (p, app) -> {
            Tensor out = bind(p, app.arg(0), operand(p.start(), app, 1));
            return switch (p.start().blocking()) {
                case CommOp.AllReduce a -> BatchRule.Result.of(out, app.dim(1));
                case CommOp.Bcast b -> BatchRule.Result.of(out, app.dim(1));
                case CommOp.AllGather g when app.arg(1).rank() == 1 ->
                        BatchRule.Result.of(out.reshape(p.handle().size(), app.size()), 1);
                default -> BatchRule.Result.of(out, 1);
            };
        });

        BatchRules.unbatched(CommPrims.COMM_RANK, "it has no operands");
        BatchRules.unbatched(CommPrims.BARRIER, "it has no operands");
    }

    private static BatchRule.Result start(CommOp.CollectiveStart p, Application app) {
        return BatchRule.Result.of(bind(p, operand(p, app, 0)), BatchInterpreter.UNBATCHED);
    }

    /**
     * Argument {@code i}, the operand of {@code p}'s blocking collective, with its batch axis where that collective's
     * rule puts it: in place for the elementwise ones, at axis 1 for those that join or split axis 0 (a batch of
     * scalars gathers as it is).
     */
    private static Tensor operand(CommOp.CollectiveStart p, Application app, int i) {
        return switch (p.blocking()) {
            case CommOp.AllReduce a -> app.arg(i);
            case CommOp.Bcast b -> app.arg(i);
            case CommOp.AllGather g when app.arg(i).rank() == 1 -> app.arg(i);
            default -> app.at(i, 1);
        };
    }

    private static BatchRule.Result waitFor(CommOp.Wait p, Application app) {
        Tensor request = app.arg(0);
        return switch (p.start()) {
            case CommOp.Isend s -> {
                Tensor sent = app.level().takeSend(request);
                CommPrims.bind(p, request, sent != null ? sent : app.arg(1));
                yield new BatchRule.Result(List.of(), List.of());
            }
            case CommOp.Irecv r -> app.level().takeReceive(request)
                    ? BatchRule.Result.of(bind(new CommOp.Wait(new CommOp.Irecv(r.comm(), r.source(), r.tag(),
                            BatchAxes.withBatch(r.result(), app.size()))), request), 0)
                    : BatchRule.Result.of(bind(p, request), BatchInterpreter.UNBATCHED);
        };
    }

    private static Tensor bind(CommOp op, Tensor... args) {
        return CommPrims.bind(op, args).getFirst();
    }
}
