package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.DataMovement;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.Reductions;
import dev.weft.backends.cpu.kernels.RunFold;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.LibraryReduction;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code weft.fused_reduce}: a library reduction (sum, product, max, min) over trailing axes of a fused value that is
 * never materialised. The fusion's generated loop ({@link FusedLoopGenerator}) evaluates up to {@value #BLOCK} elements
 * at a time into a scratch block (a fusion with views ({@link FusionViews}): whole rows of its fused shape, at least
 * one), and each block is folded, in order, into the runs of the outputs it covers ({@link RunFold}; a block of whole
 * runs of a floating sum, product, max or min through {@link NativeRowKernels}), so the result is bit-identical to the
 * fusion followed by the library {@code reduce}. It runs on the calling thread: each
 * output's fold is sequential. A region the generator does not take (an op on a dtype its kernel rejects) runs as
 * the chunked fusion into a full-size buffer that the library kernel reduces.
 */
final class FusedReduceInstruction {
    /** Elements per block: a few tens of KiB of scratch, which stays in the L1 or L2 cache. */
    static final int BLOCK = 4096;

    private FusedReduceInstruction() {
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        Op fusion = fusionOf(op);
        ElementwiseOp reduction = LibraryReduction.combiner(op.regions().get(1));
        if (reduction == null) {
            throw new IllegalArgumentException("the reduce body is not a sum, product, maximum or minimum");
        }
        TensorType fused = fusion.result().tensorType();
        long[] dims = fused.shape().dims();
        int[] axes = Arrays.stream(OpCompilers.longs(op, "dimensions")).mapToInt(Math::toIntExact).sorted().toArray();
        long run = 1;
        for (int k = 0; k < axes.length; k++) {
            if (axes[k] != dims.length - axes.length + k) {
                throw new IllegalArgumentException("fused reductions run over trailing axes only");
            }
            run *= dims[axes[k]];
        }
        long n = fused.shape().size();
        DType t = fused.dtype();
        TensorType outType = op.result().tensorType();
        long outSize = outType.shape().size();
        int init = b.slot(op.operands().getLast());
        int out = b.slot(op.result());
        int outClass = b.sizeClass(outType);
        List<Attr.Dense> constants = new ArrayList<>();
        Optional<FusedLoopSpec> spec = FusedLoopSpec.of(fusion, n, constants);
        if (spec.isEmpty()) {
            return materialised(fusion, b, reduction, dims, axes, init, out, outClass, outSize);
        }
        Evaluation evaluation = evaluation(fusion, b, b.fusedLoop(spec.get(), n), constants, n, run);
        int blockClass = b.sizeClass(evaluation.blockElements() * t.byteSize());
        long foldRun = run;
        NativeRowKernels folds = NativeRowKernels.covers(reduction, t) ? NativeRowKernels.prepare() : null;
        return f -> {
            Buffer o = f.allocate(outClass);
            DataMovement.fill(t, o.segment, outSize, f.slots[init].segment);
            MemorySegment block = f.allocateSegment(blockClass);
            RunFold fold = new RunFold(reduction, t);
            try {
                evaluation.run(f, block, (from, to) -> {
                    if (folds == null || !foldWholeRuns(folds, reduction, t, block, from, to, foldRun, o.segment)) {
                        fold(fold, block, from, to, foldRun, o.segment);
                    }
                });
            } catch (ArithmeticException e) {
                // idiv and ldiv say "/ by zero"; report it as the eager kernels do
                throw new ArithmeticException(Elementwise.DIVISION_BY_ZERO);
            } finally {
                f.recycle(blockClass, block);
            }
            f.define(out, o);
        };
    }

    /**
     * The {@code weft.fusion} that {@code op} reduces: its fusion operands (all but the init), region and view
     * attributes, and one result, the fused value.
     */
    private static Op fusionOf(Op op) {
        Map<String, Attr> attributes = new LinkedHashMap<>();
        for (String key : List.of(StableHlo.FUSION_SLICE_STARTS, StableHlo.FUSION_PIECES)) {
            if (op.attr(key) != null) {
                attributes.put(key, op.attr(key));
            }
        }
        List<Value> operands = op.operands().subList(0, op.operands().size() - 1);
        Value fused = op.regions().getFirst().results().getFirst();
        return new Op(StableHlo.FUSION, operands, List.of(fused.type()), attributes,
                List.of(op.regions().getFirst()), op.location());
    }

    /**
     * Folds elements {@code [from, to)}, held by {@code block} from its start, into the runs of {@code out} through
     * {@link NativeRowKernels} when they are whole runs; false (nothing done) otherwise, or when the folds are not
     * native.
     */
    private static boolean foldWholeRuns(NativeRowKernels folds, ElementwiseOp r, DType t, MemorySegment block,
                                         long from, long to, long run, MemorySegment out) {
        if (from % run != 0 || (to - from) % run != 0) {
            return false;
        }
        return folds.fold(r, t, block, out.asSlice(from / run * t.byteSize()), (to - from) / run, run);
    }

    /** Folds elements {@code [from, to)}, held by {@code block} from its start, into the runs of {@code out}. */
    private static void fold(RunFold fold, MemorySegment block, long from, long to, long run, MemorySegment out) {
        for (long i = from; i < to; ) {
            long k = i / run;
            long end = Math.min(to, (k + 1) * run);
            fold.add(block, i - from, end - i);
            if (end == (k + 1) * run) {
                fold.finish(out, k);
            }
            i = end;
        }
    }

    /** Called after each block is evaluated, with the element range it holds. */
    private interface BlockDone {
        void accept(long from, long to);
    }

    /** Evaluates the fused value block by block, in order, into a scratch block of {@link #blockElements}. */
    private interface Evaluation {
        long blockElements();

        void run(CpuFrame f, MemorySegment block, BlockDone done);
    }

    /**
     * The block-wise evaluation of {@code fusion} (of {@code n} elements) by {@code loop}: without views, full-size
     * inputs are narrowed to each block, a whole number of runs of {@code run} elements when one fits; with views,
     * blocks are whole rows that {@link FusionViews} runs.
     */
    private static Evaluation evaluation(Op fusion, ProgramBuilder b, FusedLoop loop, List<Attr.Dense> constants,
                                         long n, long run) {
        int[] inputSlots = b.slots(fusion.operands());
        MemorySegment[] constantData = constants.stream().map(Attr.Dense::data).toArray(MemorySegment[]::new);
        FusionViews views = FusionViews.of(fusion,
                constants.stream().mapToLong(d -> d.type().dtype().byteSize()).toArray());
        if (views == null) {
            List<Value> arguments = fusion.regions().getFirst().arguments();
            int inputs = inputSlots.length + constantData.length;
            long[] narrowed = new long[inputs];
            for (int i = 0; i < inputs; i++) {
                // a rank-0 argument only broadcasts: the loop reads its one element
                boolean full = i >= arguments.size() || arguments.get(i).tensorType().shape().size() == n;
                narrowed[i] = !full ? 0 : i < arguments.size() ? arguments.get(i).tensorType().dtype().byteSize()
                        : constants.get(i - arguments.size()).type().dtype().byteSize();
            }
            long block = Math.max(1, Math.min(run > 0 && run <= BLOCK ? BLOCK / run * run : BLOCK, n));
            return new Evaluation() {
                @Override
                public long blockElements() {
                    return block;
                }

                @Override
                public void run(CpuFrame f, MemorySegment scratch, BlockDone done) {
                    MemorySegment[] whole = FusionInstruction.sources(f, inputSlots, constantData, inputs);
                    MemorySegment[] in = whole.clone();
                    MemorySegment[] out = {scratch};
                    for (long from = 0; from < n; from += block) {
                        long len = Math.min(block, n - from);
                        for (int i = 0; i < inputs; i++) {
                            if (narrowed[i] > 0) {
                                in[i] = whole[i].asSlice(from * narrowed[i], len * narrowed[i]);
                            }
                        }
                        loop.run(in, out, 0, len);
                        done.accept(from, from + len);
                    }
                }
            };
        }
        int[] fillClass = FusionInstruction.fillClasses(views, b);
        long rowLength = views.rowLength();
        long rowsPerBlock = Math.max(1, BLOCK / Math.max(1, rowLength));
        return new Evaluation() {
            @Override
            public long blockElements() {
                return Math.max(1, rowsPerBlock * rowLength);
            }

            @Override
            public void run(CpuFrame f, MemorySegment scratch, BlockDone done) {
                MemorySegment[] sources = FusionInstruction.sources(f, inputSlots, constantData, views.sources());
                FusionInstruction.fillRows(views, f, fillClass, sources);
                try {
                    MemorySegment[] out = {scratch};
                    for (long row = 0, rows = views.rows(); row < rows; row += rowsPerBlock) {
                        long last = Math.min(rows, row + rowsPerBlock);
                        views.run(loop, sources, out, row, last, row);
                        done.accept(row * rowLength, last * rowLength);
                    }
                } finally {
                    FusionInstruction.recycleFillRows(f, fillClass, sources);
                }
            }
        };
    }

    /** The fallback: the chunked fusion into a full-size buffer, then the library reduction of it. */
    private static Instruction materialised(Op fusion, ProgramBuilder b, ElementwiseOp reduction, long[] dims,
                                            int[] axes, int init, int out, int outClass, long outSize) {
        Instruction produce = FusionInstruction.chunked(fusion, b);
        int value = b.slot(fusion.result());
        DType t = fusion.result().tensorType().dtype();
        return f -> {
            produce.execute(f);
            Buffer o = f.allocate(outClass);
            DataMovement.fill(t, o.segment, outSize, f.slots[init].segment);
            Reductions.accumulate(reduction, t, f.slots[value].segment, dims, axes, o.segment);
            f.release(value);
            f.define(out, o);
        };
    }
}
