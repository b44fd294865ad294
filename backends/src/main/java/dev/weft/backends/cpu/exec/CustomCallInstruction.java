package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/** {@code stablehlo.custom_call}, dispatched to the handler of its {@code call_target_name}. */
final class CustomCallInstruction implements Instruction {
    private final Op op;
    private final CustomCallHandler handler;
    private final int[] in;
    private final int[] out;
    /** Per result: its size class, or -1 for a token. */
    private final int[] resultClass;
    /** The operands that are not tokens. */
    private final int[] tensorOperands;
    private final boolean retains;
    /** Whether the handler keeps the result buffers it replaces ({@link CustomCallHandler#keepsOfferedResults}). */
    private final boolean keepsOffered;
    private final int scratch;

    private CustomCallInstruction(Op op, CustomCallHandler handler, ProgramBuilder b) {
        this.op = op;
        this.handler = handler;
        this.in = b.slots(op.operands());
        this.out = b.slots(op.results());
        this.resultClass = op.results().stream()
                .mapToInt(v -> v.type() instanceof TensorType t ? b.sizeClass(t) : -1).toArray();
        this.tensorOperands = tensors(op.operands());
        this.retains = handler.retainsOperands(op);
        this.keepsOffered = handler.keepsOfferedResults(op);
        int operands = in.length;
        int results = out.length;
        this.scratch = b.scratchSlot(() -> CallArrays.of(operands, results));
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        CustomCallHandler handler = handler(op, b);
        Runnable progress = handler.progress(op);
        if (progress != null) {
            b.transferStarted(op, progress);
        }
        int[] operands = tensors(op.operands());
        int[] results = tensors(op.results());
        if (operands.length == 1 && results.length == 1) {
            OperandResultCall direct = handler.operandResultCall(op);
            if (direct != null) {
                Value result = op.results().get(results[0]);
                int[] tokens = op.results().stream().filter(v -> v != result).mapToInt(b::slot).toArray();
                // a collective whose operand dies here runs in place (MPI_IN_PLACE): no result buffer of its own
                int[] candidates = handler.writesOverOperand(op) && !handler.keepsOfferedResults(op)
                        ? b.inPlaceCandidates(op, results[0]) : new int[0];
                return new Direct(direct, b.slot(op.operand(operands[0])), b.slot(result),
                        b.sizeClass(result.tensorType()), tokens, candidates);
            }
        }
        return new CustomCallInstruction(op, handler, b);
    }

    /** The handler of {@code op}'s target, bound to {@code op}. */
    private static CustomCallHandler handler(Op op, ProgramBuilder b) {
        if (!(op.attr("call_target_name") instanceof Attr.Str target)) {
            throw new IllegalArgumentException("missing call_target_name");
        }
        return b.customCalls().handler(target.value()).orElseThrow(() ->
                new WeftException(op.location(), "no handler for custom call target \"" + target.value()
                        + "\" (registered: " + b.customCalls().targets() + ")")).bind(op);
    }

    /**
     * The bound handler of {@code op}, a custom call, if it has one tensor operand and one tensor result besides
     * any tokens (it may then run as {@link CustomCallHandler#operandResultCall}); else null.
     */
    static CustomCallHandler pairHandler(Op op, ProgramBuilder b) {
        if (tensors(op.operands()).length != 1 || tensors(op.results()).length != 1) {
            return null;
        }
        return handler(op, b);
    }

    /** The positions of the tensors (not tokens) among {@code values}. */
    private static int[] tensors(List<Value> values) {
        return IntStream.range(0, values.size()).filter(i -> values.get(i).type() instanceof TensorType).toArray();
    }

    /**
     * A custom call on one tensor operand and one tensor result (and tokens) that its handler runs as a direct
     * call ({@link CustomCallHandler#operandResultCall}): no arrays, and the result is always the buffer offered:
     * the operand's own when it dies here and the handler {@linkplain CustomCallHandler#writesOverOperand writes over
     * it} (an allreduce of a gradient: MPI_IN_PLACE, no fresh buffer), else one of the result's size class.
     */
    private record Direct(OperandResultCall call, int in, int out, int resultClass,
                          int[] tokens, int[] candidates) implements Instruction {
        @Override
        public void execute(CpuFrame f) {
            Buffer result = ProgramBuilder.output(f, candidates, resultClass);
            call.accept(f.slots[in].segment, result.segment);
            f.define(out, result);
            for (int t : tokens) {
                f.define(t, Buffer.TOKEN);
            }
        }
    }

    @Override
    public void execute(CpuFrame f) {
        CallArrays a = (CallArrays) f.scratch[scratch];
        MemorySegment[] operands = a.operands;
        for (int k : tensorOperands) {
            Buffer buf = f.slots[in[k]];
            if (retains) {
                buf.escaped = true;
            }
            operands[k] = buf.segment;
        }
        Buffer[] offered = a.offered;
        MemorySegment[] results = a.results;
        for (int i = 0; i < out.length; i++) {
            if (resultClass[i] >= 0) {
                offered[i] = f.allocate(resultClass[i]);
                results[i] = offered[i].segment;
            }
        }
        handler.call(op, operands, results);
        for (int i = 0; i < out.length; i++) {
            if (resultClass[i] < 0) {
                f.define(out[i], Buffer.TOKEN);
            } else if (results[i] == offered[i].segment) {
                f.define(out[i], offered[i]);
            } else {
                adopt(f, i, offered[i], results[i]);
            }
        }
    }

    /**
     * Defines result {@code i} as the buffer the handler put in place of the one offered (a completed receive's
     * own buffer), which goes back to the pool unless the handler keeps it. Kept out of {@link #execute} so that stays small.
     */
    private void adopt(CpuFrame f, int i, Buffer offered, MemorySegment result) {
        TensorType t = (TensorType) op.results().get(i).type();
        if (result == null || result.byteSize() < t.byteSize()) {
            throw new IllegalStateException("handler returned "
                    + (result == null ? "no buffer" : result.byteSize() + " bytes") + " for " + t.mlir());
        }
        if (keepsOffered) {
            // the handler took the offered buffer: a replacement of the result's size takes its place in the pool
            f.define(out[i], result.byteSize() == t.byteSize() ? new Buffer(result, Buffer.Kind.TEMP, resultClass[i])
                    : new Buffer(result, Buffer.Kind.EXTERNAL, -1));
            return;
        }
        f.recycle(resultClass[i], offered.segment);
        f.define(out[i], new Buffer(result, Buffer.Kind.EXTERNAL, -1));
    }

    /**
     * The arrays one custom call passes to its handler, reused by every execution in one run (so they hold on to
     * nothing past it); token operands are {@link CustomCallRegistry#TOKEN} throughout.
     */
    private record CallArrays(MemorySegment[] operands, Buffer[] offered, MemorySegment[] results) {
        static CallArrays of(int operands, int results) {
            CallArrays a = new CallArrays(new MemorySegment[operands], new Buffer[results], new MemorySegment[results]);
            Arrays.fill(a.operands, CustomCallRegistry.TOKEN);
            return a;
        }
    }
}
