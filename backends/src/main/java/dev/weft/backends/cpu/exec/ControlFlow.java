package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * {@code stablehlo.while} and {@code stablehlo.if}. Between iterations the loop holds one reference to each
 * carry, so a carry stays alive while the condition reads it; the body's arguments take over that reference
 * before the body runs, which lets the body overwrite a carry it consumes. A condition that only compares an
 * integer carry with a constant ({@code Weft.fori}'s {@code i < end}) is evaluated in Java instead of as a region.
 */
final class ControlFlow {
    private ControlFlow() {
    }

    static Instruction compileWhile(Op op, ProgramBuilder b) {
        int[] in = b.slots(op.operands());
        int[] out = b.slots(op.results());
        CompiledBlock body = b.compile(op.regions().get(1));
        CountedBound counted = CountedBound.of(op.regions().get(0));
        if (counted != null) {
            return f -> {
                Buffer[] carry = enter(f, in);
                while (counted.holds(carry[counted.carry()].segment)) {
                    iterate(f, body, carry);
                }
                exit(f, out, carry);
            };
        }
        CompiledBlock cond = b.compile(op.regions().get(0));
        int predSlot = cond.resultSlots()[0];
        return f -> {
            Buffer[] carry = enter(f, in);
            while (true) {
                cond.bindArguments(f, carry);
                cond.run(f);
                boolean again = f.slots[predSlot].segment.get(ValueLayout.JAVA_BYTE, 0) != 0;
                cond.exitScope(f);
                if (!again) {
                    break;
                }
                iterate(f, body, carry);
            }
            exit(f, out, carry);
        };
    }

    /** The initial carries, each with a reference held by the loop. */
    private static Buffer[] enter(Frame f, int[] in) {
        Buffer[] carry = new Buffer[in.length];
        for (int i = 0; i < in.length; i++) {
            carry[i] = f.slots[in[i]];
            carry[i].refs++;
        }
        return carry;
    }

    /** Runs the body once, replacing {@code carry} by its results. */
    private static void iterate(Frame f, CompiledBlock body, Buffer[] carry) {
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

    private static void exit(Frame f, int[] out, Buffer[] carry) {
        for (int i = 0; i < out.length; i++) {
            f.slots[out[i]] = carry[i];
        }
    }

    /** A condition region that is exactly {@code carry < bound} on a rank-0 i32 or i64 carry. */
    private record CountedBound(int carry, boolean wide, long bound) {
        static CountedBound of(Block cond) {
            List<Op> ops = cond.ops();
            if (ops.size() != 3 || !ops.get(2).name().equals(StableHlo.RETURN)) {
                return null;
            }
            Op constant = ops.get(0).name().equals(StableHlo.CONSTANT) ? ops.get(0) : ops.get(1);
            Op compare = constant == ops.get(0) ? ops.get(1) : ops.get(0);
            if (!constant.name().equals(StableHlo.CONSTANT) || !compare.name().equals(StableHlo.COMPARE)
                    || !(constant.attr("value") instanceof Attr.Dense d) || d.type().shape().rank() != 0
                    || !(compare.attr("comparison_direction") instanceof Attr.Enum e) || !e.value().equals("LT")
                    || ops.get(2).operand(0) != compare.result() || compare.operand(1) != constant.result()) {
                return null;
            }
            Value counter = compare.operand(0);
            int index = cond.arguments().indexOf(counter);
            DType t = d.type().dtype();
            if (index < 0 || (t != DType.I32 && t != DType.I64)) {
                return null;
            }
            boolean wide = t == DType.I64;
            long bound = wide ? d.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                    : d.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0);
            return new CountedBound(index, wide, bound);
        }

        boolean holds(MemorySegment counter) {
            long v = wide ? counter.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                    : counter.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
            return v < bound;
        }
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
