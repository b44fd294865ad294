package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.lowering.passes.Uses;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * {@code stablehlo.while} and {@code stablehlo.if}. Between iterations the loop holds one reference to each
 * carry, so a carry stays alive while the condition reads it; the body's arguments take over that reference
 * before the body runs, which lets the body overwrite a carry it consumes (carries that never change are bound
 * once instead, see {@link LoopBody}). A condition that only compares an
 * integer carry with a constant ({@code Weft.fori}'s {@code i < end}) is evaluated in Java instead of as a region,
 * and when the body only adds a constant to that counter, the loop counts in Java too.
 */
final class ControlFlow {
    private ControlFlow() {
    }

    static Instruction compileWhile(Op op, ProgramBuilder b) {
        int[] in = b.slots(op.operands());
        int[] out = b.slots(op.results());
        Block bodyBlock = op.regions().get(1);
        CountedBound counted = CountedBound.of(op.regions().get(0));
        CounterStep step = counted == null ? null : CounterStep.of(bodyBlock, counted.carry());
        if (step != null) {
            int c = counted.carry();
            LoopBody body = LoopBody.of(bodyBlock, b.compile(bodyBlock, Set.of(step.add(), step.constant())), c);
            int sizeClass = b.sizeClass(op.results().get(c).tensorType());
            return f -> {
                Buffer[] carry = enter(f, in, body);
                Buffer initial = carry[c];
                long i = counted.value(initial.segment);
                while (i < counted.bound()) {
                    body.iterate(f, carry);
                    i = counted.wide() ? i + step.increment() : (int) (i + step.increment());
                }
                body.unpin(f);
                Buffer last = f.allocate(sizeClass);
                last.refs = 1;
                counted.store(last.segment, i);
                f.drop(initial);
                carry[c] = last;
                exit(f, out, carry);
            };
        }
        LoopBody body = LoopBody.of(bodyBlock, b.compile(bodyBlock), -1);
        if (counted != null) {
            return f -> {
                Buffer[] carry = enter(f, in, body);
                while (counted.holds(carry[counted.carry()].segment)) {
                    body.iterate(f, carry);
                }
                body.unpin(f);
                exit(f, out, carry);
            };
        }
        CompiledBlock cond = b.compile(op.regions().get(0));
        int predSlot = cond.resultSlots()[0];
        return f -> {
            Buffer[] carry = enter(f, in, body);
            while (true) {
                cond.bindArguments(f, carry);
                cond.run(f);
                boolean again = f.slots[predSlot].segment.get(ValueLayout.JAVA_BYTE, 0) != 0;
                cond.exitScope(f);
                if (!again) {
                    break;
                }
                body.iterate(f, carry);
            }
            body.unpin(f);
            exit(f, out, carry);
        };
    }

    /** The initial carries, each with a reference held by the loop, and the body's pinned arguments bound. */
    private static Buffer[] enter(Frame f, int[] in, LoopBody body) {
        Buffer[] carry = new Buffer[in.length];
        for (int i = 0; i < in.length; i++) {
            carry[i] = f.slots[in[i]];
            carry[i].refs++;
        }
        body.block.bindArguments(f, carry, body.pinned);
        return carry;
    }

    /**
     * A while body. A carry that every iteration leaves as it was is pinned: bound to the body's argument once for
     * the whole loop, so that an iteration binds, drops and takes only the carries that change. Pinned are the
     * carries the body returns as they came (its own argument at the same position), tokens (every token is the
     * same buffer) and the counter a counted loop keeps in Java (the body never reads it).
     */
    private record LoopBody(CompiledBlock block, int[] varying, int[] pinned) {
        static LoopBody of(Block body, CompiledBlock compiled, int kept) {
            List<Value> args = body.arguments();
            List<Value> results = body.results();
            int[] pinned = IntStream.range(0, args.size()).filter(i -> i == kept || results.get(i) == args.get(i)
                    || args.get(i).type() instanceof TokenType).toArray();
            int[] varying = IntStream.range(0, args.size()).filter(i -> Arrays.binarySearch(pinned, i) < 0)
                    .toArray();
            int[] pinnedSlots = Arrays.stream(pinned).map(i -> compiled.argSlots()[i]).toArray();
            return new LoopBody(compiled.pinning(pinnedSlots), varying, pinned);
        }

        /**
         * Runs the body once, replacing the varying carries by its results. The loop's reference to each of
         * them passes to the body's argument, which lets the body overwrite a carry it consumes.
         */
        void iterate(Frame f, Buffer[] carry) {
            block.bindArguments(f, carry, varying);
            for (int i : varying) {
                f.drop(carry[i]);
            }
            block.run(f);
            for (int i : varying) {
                carry[i] = block.takeResult(f, i);
            }
            block.exitScope(f);
        }

        /** Releases the pinned arguments once the loop is done. */
        void unpin(Frame f) {
            for (int i : pinned) {
                f.release(block.argSlots()[i]);
            }
        }
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
            return value(counter) < bound;
        }

        long value(MemorySegment counter) {
            return wide ? counter.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                    : counter.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
        }

        void store(MemorySegment counter, long v) {
            if (wide) {
                counter.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
            } else {
                counter.set(ValueLayout.JAVA_INT_UNALIGNED, 0, (int) v);
            }
        }
    }

    /**
     * A body whose only use of the counter is {@code counter + k} (k a positive constant of the body) returned as
     * the next counter, {@code Weft.fori}'s increment: the loop then counts in Java instead of running those two
     * ops. The sum wraps like the op's own integer type.
     */
    private record CounterStep(Op add, Op constant, long increment) {
        static CounterStep of(Block body, int carry) {
            Value counter = body.arguments().get(carry);
            Op ret = body.ops().getLast();
            Value next = ret.operand(carry);
            Op add = body.ops().stream().filter(o -> o.results().contains(next)).findFirst().orElse(null);
            if (add == null || !add.name().equals(StableHlo.ADD) || add.operands().size() != 2) {
                return null;
            }
            Value other = add.operand(0) == counter ? add.operand(1) : add.operand(1) == counter ? add.operand(0)
                    : null;
            Op constant = other == null ? null
                    : body.ops().stream().filter(o -> o.results().contains(other)).findFirst().orElse(null);
            if (constant == null || !constant.name().equals(StableHlo.CONSTANT)
                    || !(constant.attr("value") instanceof Attr.Dense d) || d.type().shape().rank() != 0
                    || !usedOnce(body, counter, next, other)) {
                return null;
            }
            long k = d.type().dtype() == DType.I64 ? d.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                    : d.type().dtype() == DType.I32 ? d.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0) : 0;
            return k > 0 ? new CounterStep(add, constant, k) : null;
        }

        private static boolean usedOnce(Block body, Value... values) {
            Uses uses = Uses.of(body);
            return Arrays.stream(values).allMatch(v -> uses.count(v) == 1);
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
