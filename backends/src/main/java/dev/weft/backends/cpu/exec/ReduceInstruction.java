package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.DataMovement;
import dev.weft.backends.cpu.kernels.Reductions;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.LibraryReduction;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * {@code stablehlo.reduce} of one operand with a scalar init. A body that is a single add, multiply, maximum or
 * minimum of its two arguments runs as a {@link Reductions} kernel, or as native code with the kernel's bits: a
 * fold of leading axes through a native fused loop, a floating fold of trailing axes through {@link NativeRowKernels};
 * any other body is evaluated once per input element, folding the elements of each output position in row-major
 * order.
 */
final class ReduceInstruction {
    private ReduceInstruction() {
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        if (op.operands().size() != 2) {
            throw new IllegalArgumentException("only single-operand reductions are supported");
        }
        TensorType inType = op.operand(0).tensorType();
        TensorType outType = op.result().tensorType();
        DType t = inType.dtype();
        long[] dims = inType.shape().dims();
        int[] axes = Arrays.stream(OpCompilers.longs(op, "dimensions")).mapToInt(Math::toIntExact).toArray();
        long outSize = outType.shape().size();
        int in = b.slot(op.operand(0)), init = b.slot(op.operand(1)), out = b.slot(op.result());
        int cls = b.sizeClass(outType);
        Block body = op.regions().getFirst();
        ElementwiseOp library = LibraryReduction.combiner(body);
        long[] fold = library == null ? null : Reductions.leadingFold(dims, axes);
        Optional<FusedLoop> rows = fold == null ? Optional.empty() : b.nativeLoop(foldSpec(library, t),
                fold[0] * fold[1]);
        if (rows.isPresent()) {
            return foldRows(rows.get(), t, fold[0], fold[1], in, init, out, cls, outSize);
        }
        long[] rowFold = library == null || !NativeRowKernels.covers(library, t) ? null
                : Reductions.trailingFold(dims, axes);
        NativeRowKernels folds = rowFold == null ? null : NativeRowKernels.prepare();
        if (folds != null) {
            return foldEachRow(folds, library, t, rowFold[0], rowFold[1], dims, axes, in, init, out, cls, outSize);
        }
        if (library != null) {
            return f -> {
                Buffer o = f.allocate(cls);
                DataMovement.fill(t, o.segment, outSize, f.slots[init].segment);
                Reductions.accumulate(library, t, f.slots[in].segment, dims, axes, o.segment);
                f.define(out, o);
            };
        }
        CompiledBlock region = b.compile(body);
        int scalarClass = b.sizeClass(t.byteSize());
        long es = t.byteSize();
        return f -> {
            Buffer o = f.allocate(cls);
            MemorySegment acc = o.segment, x = f.slots[in].segment;
            DataMovement.fill(t, acc, outSize, f.slots[init].segment);
            MemorySegment accArg = f.allocateSegment(scalarClass), xArg = f.allocateSegment(scalarClass);
            Buffer[] args = {
                new Buffer(accArg, Buffer.Kind.READ_ONLY, -1), new Buffer(xArg, Buffer.Kind.READ_ONLY, -1)
            };
            long[] target = Reductions.outputIndexOfEachInput(dims, axes);
            for (int i = 0; i < target.length; i++) {
                MemorySegment.copy(acc, target[i] * es, accArg, 0, es);
                MemorySegment.copy(x, i * es, xArg, 0, es);
                region.bindArguments(f, args);
                region.run(f);
                MemorySegment.copy(f.slots[region.resultSlots()[0]].segment, 0, acc, target[i] * es, es);
                region.exitScope(f);
            }
            f.recycle(scalarClass, accArg);
            f.recycle(scalarClass, xArg);
            f.define(out, o);
        };
    }

    /**
     * A floating reduction of trailing axes: each row of the input folded into one output element by
     * {@link NativeRowKernels} once its library is loaded, by the {@link Reductions} kernel (the same bits) until then.
     */
    private static Instruction foldEachRow(NativeRowKernels folds, ElementwiseOp r, DType t, long rows, long length,
                                           long[] dims, int[] axes, int in, int init, int out, int cls, long outSize) {
        return f -> {
            Buffer o = f.allocate(cls);
            DataMovement.fill(t, o.segment, outSize, f.slots[init].segment);
            MemorySegment x = f.slots[in].segment;
            if (!folds.fold(r, t, x, o.segment, rows, length)) {
                Reductions.accumulate(r, t, x, dims, axes, o.segment);
            }
            f.define(out, o);
        };
    }

    /** {@code acc = acc r x}, element for element, as {@link Reductions#accumulate} folds a row. */
    private static FusedLoopSpec foldSpec(ElementwiseOp r, DType t) {
        return new FusedLoopSpec(List.of(new FusedLoopSpec.Element(0, t), new FusedLoopSpec.Element(1, t),
                new FusedLoopSpec.Apply(r, t, t, List.of(0, 1))), List.of(2));
    }

    /**
     * A reduction of leading axes as {@link Reductions#accumulate} computes it, row after row of the input folded
     * into the output in order, by {@code loop}'s native code in one call (the kernel's row calls run in the JVM's
     * profiling tier for a program's first tens of steps).
     */
    private static Instruction foldRows(FusedLoop loop, DType t, long rows, long length, int in, int init, int out,
                                        int cls, long outSize) {
        long rowBytes = length * t.byteSize();
        return f -> {
            Buffer o = f.allocate(cls);
            DataMovement.fill(t, o.segment, outSize, f.slots[init].segment);
            loop.runRows(new MemorySegment[] {o.segment, f.slots[in].segment}, new long[2], new long[] {0, rowBytes},
                    new MemorySegment[] {o.segment}, new long[1], new long[1], rows, 0, length);
            f.define(out, o);
        };
    }
}
