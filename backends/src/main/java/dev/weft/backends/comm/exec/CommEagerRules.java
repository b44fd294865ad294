package dev.weft.backends.comm.exec;

import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.backends.cpu.CpuEagerInterpreter;
import dev.weft.backends.cpu.EagerRuleProvider;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Eager implementations of the communication primitives: each call runs at once on the communicator, checked as a
 * compiled program's are ({@link CommCheck}).
 */
public final class CommEagerRules implements EagerRuleProvider {
    @Override
    public void register(CpuEagerInterpreter interp) {
        for (Primitive<? extends CommOp> prim : CommPrims.ALL) {
            register(interp, prim);
        }
    }

    private static <P extends CommOp> void register(CpuEagerInterpreter interp, Primitive<P> prim) {
        interp.register(prim, (p, inAvals, in, outAvals, out) -> {
            MemorySegment[] results = out.clone();
            CommCall call = call(p, inAvals);
            ObservedComm.action(call, call.action(), false).run(in, results);
            copyInto(results, out, outAvals);
        });
    }

    private static CommCall call(CommOp p, List<Aval> inAvals) {
        RuntimeReduceOp reduce = p instanceof CommOp.Reducing r ? ReduceOps.of(r.op(), () -> ReduceOps.viaTensors(r.op()))
                : null;
        SourceLocation where = SourceLocation.capture();
        return new CommCall(p, Communicator.of(p.handle(), where), reduce, p.data(inAvals), where);
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
