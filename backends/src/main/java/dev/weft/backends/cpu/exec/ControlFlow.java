package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Op;
import java.lang.foreign.ValueLayout;

/**
 * {@code stablehlo.while} and {@code stablehlo.if}. Between iterations the loop holds one reference to each
 * carry, so a carry stays alive while the condition reads it; the body's arguments take over that reference
 * before the body runs, which lets the body overwrite a carry it consumes.
 */
final class ControlFlow {
    private ControlFlow() {
    }

    static Instruction compileWhile(Op op, ProgramBuilder b) {
        int[] in = b.slots(op.operands());
        int[] out = b.slots(op.results());
        CompiledBlock cond = b.compile(op.regions().get(0));
        CompiledBlock body = b.compile(op.regions().get(1));
        int predSlot = cond.resultSlots()[0];
        return f -> {
            Buffer[] carry = new Buffer[in.length];
            for (int i = 0; i < in.length; i++) {
                carry[i] = f.slots[in[i]];
                carry[i].refs++;
            }
            while (true) {
                cond.bindArguments(f, carry);
                cond.run(f);
                boolean again = f.slots[predSlot].segment.get(ValueLayout.JAVA_BYTE, 0) != 0;
                cond.exitScope(f);
                if (!again) {
                    break;
                }
                body.bindArguments(f, carry);
                for (Buffer c : carry) {
                    f.drop(c);
                }
                body.run(f);
                for (int i = 0; i < carry.length; i++) {
                    carry[i] = body.takeResult(f, i);
                }
                body.exitScope(f);
            }
            for (int i = 0; i < out.length; i++) {
                f.slots[out[i]] = carry[i];
            }
        };
    }

    static Instruction compileIf(Op op, ProgramBuilder b) {
        int pred = b.slot(op.operand(0));
        int[] out = b.slots(op.results());
        CompiledBlock onTrue = b.compile(op.regions().get(0));
        CompiledBlock onFalse = b.compile(op.regions().get(1));
        return f -> {
            CompiledBlock branch = f.slots[pred].segment.get(ValueLayout.JAVA_BYTE, 0) != 0 ? onTrue : onFalse;
            branch.run(f);
            for (int i = 0; i < out.length; i++) {
                f.slots[out[i]] = branch.takeResult(f, i);
            }
            branch.exitScope(f);
        };
    }
}
