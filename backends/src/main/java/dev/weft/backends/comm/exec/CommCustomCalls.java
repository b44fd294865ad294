package dev.weft.backends.comm.exec;

import dev.weft.lowering.Targets;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ReduceFunction;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.cpu.exec.CpuCustomCallProvider;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.cpu.exec.CustomCallHandler;
import dev.weft.backends.cpu.exec.CustomCallRegistry;
import dev.weft.backends.cpu.exec.OperandResultCall;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.CommBindings;
import dev.weft.spi.Primitive;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Runs the communication custom calls of a module lowered for the {@code cpu} target ({@code weft.mpi.<op>}, the
 * prefix the target names): each op's descriptor (its {@code backend_config}, an {@link Attr.CommConfig}) becomes
 * a {@link CommCall} once, when the executable is built, on the communicator its reference is bound to; token
 * operands are dropped and token results returned as {@link CustomCallRegistry#TOKEN}.
 */
public final class CommCustomCalls implements CpuCustomCallProvider {
    @Override
    public void register(Module module, CommBindings comms, CustomCallRegistry registry) {
        CustomCallHandler handler = handler(module, comms);
        String prefix = Targets.named(module.target()).commCallPrefix();
        for (Primitive<? extends CommOp> prim : CommPrims.ALL) {
            registry.register(prefix + prim.name(), handler);
        }
    }

    private static CustomCallHandler handler(Module module, CommBindings comms) {
        return new CustomCallHandler() {
            @Override
            public void call(Op op, MemorySegment[] operands, MemorySegment[] results) {
                bind(op).call(op, operands, results);
            }

            @Override
            public CustomCallHandler bind(Op op) {
                return new BoundCall(commCall(module, comms, op), op);
            }

            @Override
            public boolean retainsOperands(Op op) {
                return false;
            }
        };
    }

    /**
     * One decoded call: tensor operands picked by precomputed index; the token result, when the op has one, is
     * its last. Blocking calls are done with their operands when they return, and an {@code isend}'s buffer stays
     * alive because the matching {@code wait} takes it as an operand, so no call retains an operand.
     */
    private static final class BoundCall implements CustomCallHandler {
        private final CommCall.Action call;
        private final Communicator.BufferPairCall pairCall;
        /** Whether {@link #pairCall} may be given one buffer as both ({@link CommOp#inPlace}). */
        private final boolean inPlace;
        private final int[] tensorOperands;
        /** Whether the tokens follow the tensors, so the operands can be passed as they are. */
        private final boolean tokensLast;
        /** A nonblocking collective's start: its communicator's {@link Communicator#progress}; else null. */
        private final Runnable progress;
        private final boolean keepsOffered;

        BoundCall(CommCall call, Op op) {
            // the operation is bound once: a bound allreduce has checked its arguments and found its MPI handles
            Communicator.BufferPairCall pair = call.pairAction();
            this.pairCall = pair == null ? null : ObservedComm.pair(call, pair, true);
            this.inPlace = pair != null && call.op().inPlace();
            this.call = pairCall != null ? CommCall.arrays(pairCall) : ObservedComm.action(call, call.action(true),
                    true);
            this.tensorOperands = IntStream.range(0, op.operands().size())
                    .filter(i -> !(op.operand(i).type() instanceof TokenType)).toArray();
            this.tokensLast = IntStream.range(0, tensorOperands.length).allMatch(i -> tensorOperands[i] == i);
            this.progress = call.op() instanceof CommOp.CollectiveStart ? call.comm()::progress : null;
            this.keepsOffered = call.op() instanceof CommOp.CollectiveWait;
        }

        @Override
        public Runnable progress(Op op) {
            return progress;
        }

        /** A nonblocking collective's wait keeps the result buffer offered, for a later start ({@code action(true)}). */
        @Override
        public boolean keepsOfferedResults(Op op) {
            return keepsOffered;
        }

        @Override
        public void call(Op op, MemorySegment[] operands, MemorySegment[] results) {
            if (tokensLast) {
                call.run(operands, results);
                return;
            }
            MemorySegment[] tensors = new MemorySegment[tensorOperands.length];
            for (int i = 0; i < tensors.length; i++) {
                tensors[i] = operands[tensorOperands[i]];
            }
            call.run(tensors, results);
        }

        @Override
        public boolean retainsOperands(Op op) {
            return false;
        }

        @Override
        public OperandResultCall operandResultCall(Op op) {
            return pairCall;
        }

        @Override
        public boolean writesOverOperand(Op op) {
            return inPlace;
        }
    }

    /**
     * The call {@code op}'s descriptor says, on the communicator bound to its reference; a custom reduce op runs
     * the module's function it calls.
     */
    private static CommCall commCall(Module module, CommBindings comms, Op op) {
        Attr.CommConfig config = (Attr.CommConfig) op.attr("backend_config");
        RuntimeReduceOp reduce = config.op() instanceof CommOp.Reducing r ? ReduceOps.of(r.op(), () -> compiled(module,
                ((Attr.Symbol) ((Attr.Array) op.attr("called_computations")).elements().getFirst()).name())) : null;
        Communicator comm = Communicator.bound(comms, config.op().comm().ref(), op.location());
        return new CommCall(config.op(), comm, reduce, config.data(), op.location());
    }

    /**
     * The module's function {@code name}, run on (in, inout) as 1-D tensors, result stored in inout. It was traced
     * for one element count, but MPI may apply a reduce function to any split of the vector, so other counts run
     * in pieces of the traced width, the last one padded with copies of its first element (the function is
     * elementwise, so padding never changes the elements kept).
     */
    private static ReduceFunction compiled(Module module, String name) {
        Func f = module.function(name);
        CpuExecutable exe = new CpuExecutable(new Module(module.target(), List.of(f)));
        long width = ((TensorType) f.argumentTypes().getFirst()).aval().shape().size();
        return (inout, in, count, dtype) -> {
            long size = dtype.byteSize();
            for (long start = 0; start < count; start += width) {
                long n = Math.min(width, count - start);
                MemorySegment a = piece(in, start, n, width, dtype);
                MemorySegment b = piece(inout, start, n, width, dtype);
                Tensor r = exe.run(List.of(ReduceOps.wrap(a, width, dtype), ReduceOps.wrap(b, width, dtype)))
                        .getFirst();
                MemorySegment.copy(TensorAccess.data(r), 0, inout, start * size, n * size);
            }
        };
    }

    /** Elements {@code [start, start + n)} of {@code v} as {@code width} elements, padded with the first. */
    private static MemorySegment piece(MemorySegment v, long start, long n, long width, DType dtype) {
        long size = dtype.byteSize();
        if (n == width) {
            return v.asSlice(start * size, width * size);
        }
        MemorySegment p = Arena.ofAuto().allocate(width * size);
        MemorySegment.copy(v, start * size, p, 0, n * size);
        for (long i = n; i < width; i++) {
            MemorySegment.copy(v, start * size, p, i * size, size);
        }
        return p;
    }
}
