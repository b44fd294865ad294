package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
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
    private final int scratch;

    private CustomCallInstruction(Op op, CustomCallHandler handler, ProgramBuilder b) {
        this.op = op;
        this.handler = handler;
        this.in = b.slots(op.operands());
        this.out = b.slots(op.results());
        this.resultClass = op.results().stream()
                .mapToInt(v -> v.type() instanceof TensorType t ? b.sizeClass(t) : -1).toArray();
        this.tensorOperands = IntStream.range(0, in.length)
                .filter(k -> !(op.operand(k).type() instanceof TokenType)).toArray();
        this.retains = handler.retainsOperands(op);
        int operands = in.length;
        int results = out.length;
        this.scratch = b.scratchSlot(() -> CallArrays.of(operands, results));
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        if (!(op.attr("call_target_name") instanceof Attr.Str target)) {
            throw new IllegalArgumentException("missing call_target_name");
        }
        CustomCallHandler handler = b.customCalls().handler(target.value()).orElseThrow(() ->
                new WeftException(op.location(), "no handler for custom call target \"" + target.value()
                        + "\" (registered: " + b.customCalls().targets() + ")")).bind(op);
        return new CustomCallInstruction(op, handler, b);
    }

    @Override
    public void execute(Frame f) {
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
     * own buffer), which goes back to the pool. Kept out of {@link #execute} so that stays small.
     */
    private void adopt(Frame f, int i, Buffer offered, MemorySegment result) {
        f.recycle(resultClass[i], offered.segment);
        TensorType t = (TensorType) op.results().get(i).type();
        if (result == null || result.byteSize() < t.byteSize()) {
            throw new IllegalStateException("handler returned "
                    + (result == null ? "no buffer" : result.byteSize() + " bytes") + " for " + t.mlir());
        }
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
