package dev.weft.backends.comm.exec;

import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.check.CommStep;
import dev.weft.backends.comm.check.ScheduleCheck;
import dev.weft.backends.cpu.CpuEagerInterpreter;
import dev.weft.backends.cpu.EagerRuleProvider;
import dev.weft.prim.CommParams;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Eager implementations of the communication primitives: each call runs at once on the communicator, a
 * collective after the ranks checked it agrees when {@code WEFT_CHECK=strict} ({@link ScheduleCheck#beforeEager}).
 */
public final class CommEagerRules implements EagerRuleProvider {
    @Override
    public void register(CpuEagerInterpreter interp) {
        for (Primitive<CommParams> prim : List.of(CommPrims.COMM_RANK, CommPrims.BARRIER, CommPrims.SEND,
                CommPrims.RECV, CommPrims.ISEND, CommPrims.IRECV, CommPrims.WAIT, CommPrims.ALLREDUCE,
                CommPrims.ALLGATHER, CommPrims.REDUCE_SCATTER, CommPrims.BCAST, CommPrims.REDUCE,
                CommPrims.ALLTOALL, CommPrims.SENDRECV)) {
            interp.register(prim, (p, inAvals, in, outAvals, out) -> {
                MemorySegment[] results = out.clone();
                CommCall call = call(prim, p, inAvals);
                if (call.op() != CommOp.COMM_RANK) {
                    ScheduleCheck.beforeEager(call.comm(), new CommStep(call.op(), false, call.data(), call.root(),
                            p.op() == null ? null : p.op().name(), -1, -1, call.where()));
                }
                ObservedComm.action(call, call.action(), false).run(in, results);
                copyInto(results, out, outAvals);
            });
        }
    }

    private static CommCall call(Primitive<CommParams> prim, CommParams p, List<Aval> inAvals) {
        Aval data = CommPrims.data(prim, p, inAvals);
        return new CommCall(CommOp.of(prim.name()), (Communicator) p.comm(), p.peer(), p.tag(), p.source(), p.recvTag(),
                p.op() == null ? null : ReduceOps.of(p.op(), ReduceOps.viaTensors(p.op())), p.root(),
                data, prim == CommPrims.SENDRECV ? p.result() : null, SourceLocation.capture());
    }

    /** Copies results the call did not write in place (a completed receive's buffer) into {@code out}. */
    private static void copyInto(MemorySegment[] results, MemorySegment[] out, List<Aval> outAvals) {
        for (int i = 0; i < out.length; i++) {
            if (results[i] != out[i]) {
                MemorySegment.copy(results[i], 0, out[i], 0, outAvals.get(i).byteSize());
            }
        }
    }
}
