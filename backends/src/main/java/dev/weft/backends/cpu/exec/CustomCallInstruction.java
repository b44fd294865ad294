package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

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
        for (int i = 0; i < out.length; i++) {
            resultClass[i] = types.get(i) instanceof TensorType t ? b.sizeClass(t) : -1;
        }
        boolean retains = handler.retainsOperands(op);
        return f -> {
            List<MemorySegment> operands = new ArrayList<>(in.length);
            for (int s : in) {
                Buffer buf = f.slots[s];
                buf.escaped |= retains;
                operands.add(buf.kind == Buffer.Kind.TOKEN ? CustomCallRegistry.TOKEN : buf.segment);
            }
            Buffer[] offered = new Buffer[out.length];
            MemorySegment[] given = new MemorySegment[out.length];
            for (int i = 0; i < out.length; i++) {
                if (resultClass[i] >= 0) {
                    offered[i] = f.allocate(resultClass[i]);
                    given[i] = offered[i].segment;
                }
            }
            List<MemorySegment> results = handler.call(op, operands, given);
            if (results.size() != out.length) {
                throw new IllegalStateException("handler returned " + results.size() + " buffers for "
                        + out.length + " results");
            }
            for (int i = 0; i < out.length; i++) {
                if (types.get(i) instanceof TensorType t) {
                    MemorySegment seg = results.get(i);
                    if (seg == given[i]) {
                        f.define(out[i], offered[i]);
                        continue;
                    }
                    f.recycle(resultClass[i], given[i]);
                    if (seg.byteSize() < t.byteSize()) {
                        throw new IllegalStateException("handler returned " + seg.byteSize() + " bytes for "
                                + t.mlir());
                    }
                    f.define(out[i], new Buffer(seg, Buffer.Kind.EXTERNAL, -1));
                } else {
                    f.define(out[i], new Buffer(CustomCallRegistry.TOKEN, Buffer.Kind.TOKEN, -1));
                }
            }
        };
    }
}
