package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/** {@code stablehlo.custom_call}, dispatched to the handler of its {@code call_target_name}. */
final class CustomCallInstruction {
    private CustomCallInstruction() {
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        if (!(op.attr("call_target_name") instanceof Attr.Str target)) {
            throw new IllegalArgumentException("missing call_target_name");
        }
        CustomCallHandler handler = b.customCalls().handler(target.value()).orElseThrow(() ->
                new WeftException(op.location(), "no handler for custom call target \"" + target.value()
                        + "\" (registered: " + b.customCalls().targets() + ")")).bind(op);
        int[] in = b.slots(op.operands());
        int[] out = b.slots(op.results());
        List<Type> types = op.results().stream().map(Value::type).toList();
        int[] resultClass = new int[out.length];
        long[] resultBytes = new long[out.length];
        for (int i = 0; i < out.length; i++) {
            resultClass[i] = types.get(i) instanceof TensorType t ? b.sizeClass(t) : -1;
            resultBytes[i] = types.get(i) instanceof TensorType t ? t.byteSize() : 0;
        }
        boolean retains = handler.retainsOperands(op);
        int[] tensorOperands = IntStream.range(0, in.length)
                .filter(k -> !(op.operand(k).type() instanceof TokenType)).toArray();
        int scratch = b.scratchSlot();
        return f -> {
            CallArrays a = f.scratch[scratch] instanceof CallArrays c ? c
                    : CallArrays.create(f, scratch, in.length, out.length);
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
                    f.recycle(resultClass[i], offered[i].segment);
                    if (results[i] == null || results[i].byteSize() < resultBytes[i]) {
                        throw new IllegalStateException("handler returned "
                                + (results[i] == null ? "no buffer" : results[i].byteSize() + " bytes") + " for "
                                + types.get(i).mlir());
                    }
                    f.define(out[i], new Buffer(results[i], Buffer.Kind.EXTERNAL, -1));
                }
            }
        };
    }

    /**
     * The arrays one custom call passes to its handler, reused by every execution in one run (so they hold on to
     * nothing past it); token operands are {@link CustomCallRegistry#TOKEN} throughout.
     */
    private record CallArrays(MemorySegment[] operands, Buffer[] offered, MemorySegment[] results) {
        static CallArrays create(Frame f, int scratch, int operands, int results) {
            CallArrays a = new CallArrays(new MemorySegment[operands], new Buffer[results], new MemorySegment[results]);
            Arrays.fill(a.operands, CustomCallRegistry.TOKEN);
            f.scratch[scratch] = a;
            return a;
        }
    }
}
