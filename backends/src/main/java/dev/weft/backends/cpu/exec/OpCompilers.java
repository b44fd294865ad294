package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.DataMovement;
import dev.weft.backends.cpu.kernels.DotGeneral;
import dev.weft.backends.cpu.kernels.DynamicSlices;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.ElementwiseKernel;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.CanonicalMatmul;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/** The table from op name to {@link OpCompiler} for every op the CPU executor runs. */
final class OpCompilers {
    private OpCompilers() {
    }

    static Map<String, OpCompiler> standard() {
        Map<String, OpCompiler> m = new HashMap<>();
        for (ElementwiseOp op : ElementwiseOp.values()) {
            m.put(op.mlirName(), OpCompilers::elementwise);
        }
        m.put(StableHlo.CONSTANT, OpCompilers::constant);
        m.put(StableHlo.RESHAPE, OpCompilers::reshape);
        m.put(StableHlo.TRANSPOSE, OpCompilers::transpose);
        m.put(StableHlo.BROADCAST_IN_DIM, OpCompilers::broadcastInDim);
        m.put(StableHlo.SLICE, OpCompilers::slice);
        m.put(StableHlo.CONCATENATE, OpCompilers::concatenate);
        m.put(StableHlo.PAD, OpCompilers::pad);
        m.put(StableHlo.DYNAMIC_SLICE, OpCompilers::dynamicSlice);
        m.put(StableHlo.DYNAMIC_UPDATE_SLICE, OpCompilers::dynamicUpdateSlice);
        m.put(StableHlo.IOTA, OpCompilers::iota);
        m.put(StableHlo.DOT_GENERAL, OpCompilers::dotGeneral);
        m.put(StableHlo.REDUCE, ReduceInstruction::compile);
        m.put(StableHlo.FUSION, FusionInstruction::compile);
        m.put(StableHlo.FUSED_REDUCE, FusedReduceInstruction::compile);
        m.put(StableHlo.WHILE, ControlFlowCompiler::compileWhile);
        m.put(StableHlo.IF, ControlFlowCompiler::compileIf);
        m.put(StableHlo.CUSTOM_CALL, CustomCallInstruction::compile);
        m.put(StableHlo.AFTER_ALL, OpCompilers::afterAll);
        return Map.copyOf(m);
    }

    private static Instruction elementwise(Op op, ProgramBuilder b) {
        Optional<FusedLoop> loop = singleOp(op).flatMap(s -> b.nativeLoop(s,
                op.result().tensorType().shape().size()));
        if (loop.isPresent()) {
            return single(op, b, loop.get());
        }
        ElementwiseKernel k = kernel(op);
        int[] in = b.slots(op.operands());
        int a0 = in[0], a1 = in.length > 1 ? in[1] : -1, a2 = in.length > 2 ? in[2] : -1;
        int out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        int[] candidates = b.inPlaceCandidates(op, 0);
        long n = op.result().tensorType().shape().size();
        return f -> {
            Buffer[] s = f.slots;
            Buffer o = ProgramBuilder.output(f, candidates, cls);
            k.apply(s[a0].segment, a1 < 0 ? null : s[a1].segment, a2 < 0 ? null : s[a2].segment, o.segment, n);
            f.define(out, o);
        };
    }

    /**
     * Elementwise {@code op} as a fused loop of one op, which equals its kernel bit for bit; empty when an operand
     * is not of the result's size or the op rejects its dtype (the kernel reports that).
     */
    private static Optional<FusedLoopSpec> singleOp(Op op) {
        long n = op.result().tensorType().shape().size();
        ElementwiseOp e = op.elementwise();
        DType operand = op.operand(e == ElementwiseOp.SELECT ? 1 : 0).tensorType().dtype();
        if (!e.accepts(operand)) {
            return Optional.empty();
        }
        List<FusedLoopSpec.Node> nodes = new ArrayList<>();
        List<Integer> args = new ArrayList<>();
        for (int i = 0; i < op.operands().size(); i++) {
            if (op.operand(i).tensorType().shape().size() != n) {
                return Optional.empty();
            }
            nodes.add(new FusedLoopSpec.Element(i, op.operand(i).tensorType().dtype()));
            args.add(i);
        }
        nodes.add(new FusedLoopSpec.Apply(e, operand, op.result().tensorType().dtype(), List.copyOf(args)));
        return Optional.of(new FusedLoopSpec(List.copyOf(nodes), List.of(nodes.size() - 1)));
    }

    /** {@code op} run by {@code loop}, its native code (the kernels run later compiled by the JIT). */
    private static Instruction single(Op op, ProgramBuilder b, FusedLoop loop) {
        int[] in = b.slots(op.operands());
        int out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        int[] candidates = b.inPlaceCandidates(op, 0);
        long n = op.result().tensorType().shape().size();
        MemorySegment[] noConstants = {};
        return f -> {
            MemorySegment[] sources = FusionInstruction.sources(f, in, noConstants, in.length);
            Buffer o = ProgramBuilder.output(f, candidates, cls);
            FusedLoopRunner.run(loop, sources, new MemorySegment[] {o.segment}, n);
            f.define(out, o);
        };
    }

    /** The kernel of elementwise op {@code op} on its operands' and result's dtypes. */
    static ElementwiseKernel kernel(Op op) {
        return Elementwise.kernel(op.elementwise(), op.operand(0).tensorType().dtype(),
                op.result().tensorType().dtype());
    }

    private static Instruction constant(Op op, ProgramBuilder b) {
        if (!(op.attr("value") instanceof Attr.Dense d)) {
            throw new IllegalArgumentException("missing dense value");
        }
        MemorySegment data = d.data();
        int out = b.slot(op.result());
        Buffer shared = new Buffer(data, Buffer.Kind.READ_ONLY, -1);
        return f -> f.define(out, shared);
    }

    /** A token only orders effects; at run time it is a marker. */
    private static Instruction afterAll(Op op, ProgramBuilder b) {
        int out = b.slot(op.result());
        return f -> f.define(out, Buffer.TOKEN);
    }

    /** Row-major reshape changes no bytes: the result aliases the operand's buffer. */
    private static Instruction reshape(Op op, ProgramBuilder b) {
        int in = b.slot(op.operand(0)), out = b.slot(op.result());
        return f -> f.define(out, f.slots[in]);
    }

    private static Instruction transpose(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims();
        int[] perm = ints(longs(op, "permutation"));
        return unaryStructural(op, b, (in, out) -> DataMovement.transpose(t.dtype(), in, dims, perm, out));
    }

    private static Instruction broadcastInDim(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims();
        int[] map = ints(longs(op, "broadcast_dimensions"));
        long[] outDims = op.result().tensorType().shape().dims();
        long[] repeat = rowRepeat(DataMovement.broadcastStrides(dims, map, outDims.length), outDims);
        NativeRowKernels kernels = repeat != null && repeat[0] * repeat[1] >= NativeLoops.CALL_MIN
                ? NativeRowKernels.prepare() : null;
        int es = (int) t.dtype().byteSize();
        return unaryStructural(op, b, (in, out) -> {
            if (kernels == null || !kernels.repeat(in, out, repeat[0], repeat[1], es)) {
                DataMovement.broadcastInDim(t.dtype(), in, dims, map, outDims, out);
            }
        });
    }

    /**
     * Rows and their length when a broadcast whose input has {@code srcStrides} along the output axes
     * {@code outDims} repeats each input element along the last axis, the input read in order (a softmax's row
     * maximum back over its row): {@link NativeRowKernels#repeat} does it in native code. Null otherwise.
     */
    static long[] rowRepeat(long[] srcStrides, long[] outDims) {
        int last = outDims.length - 1;
        if (last < 0 || srcStrides[last] != 0 || outDims[last] < 2) {
            return null;
        }
        long rows = 1;
        for (int ax = last - 1; ax >= 0; ax--) {
            if (srcStrides[ax] != rows && outDims[ax] > 1) {
                return null;
            }
            rows *= outDims[ax];
        }
        return rows == 0 ? null : new long[] {rows, outDims[last]};
    }

    private static Instruction slice(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims();
        long[] start = longs(op, "start_indices"), limit = longs(op, "limit_indices");
        long[] step = op.attr("strides") == null ? ones(dims.length) : longs(op, "strides");
        return unaryStructural(op, b, (in, out) -> DataMovement.slice(t.dtype(), in, dims, start, limit, step, out));
    }

    private static Instruction pad(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims();
        long[] low = longs(op, "edge_padding_low"), high = longs(op, "edge_padding_high");
        long[] interior = op.attr("interior_padding") == null ? new long[dims.length] : longs(op, "interior_padding");
        for (int i = 0; i < dims.length; i++) {
            if (low[i] < 0 || high[i] < 0 || interior[i] < 0) {
                throw new IllegalArgumentException("negative padding is not supported");
            }
        }
        int in = b.slot(op.operand(0)), value = b.slot(op.operand(1)), out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        return f -> {
            Buffer o = f.allocate(cls);
            DataMovement.pad(t.dtype(), f.slots[in].segment, dims, f.slots[value].segment, low, high, interior,
                    o.segment);
            f.define(out, o);
        };
    }

    private static Instruction dynamicSlice(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims(), sizes = longs(op, "slice_sizes"), step = ones(dims.length);
        DType[] types = operandTypes(op);
        int[] in = b.slots(op.operands());
        int out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        return f -> {
            MemorySegment[] s = segments(f, in);
            long[] start = DynamicSlices.starts(types, s, 1, dims, sizes), limit = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                limit[i] = start[i] + sizes[i];
            }
            Buffer o = f.allocate(cls);
            DataMovement.slice(t.dtype(), s[0], dims, start, limit, step, o.segment);
            f.define(out, o);
        };
    }

    /**
     * Writes the update over the operand's buffer when the operand dies here and is this frame's own: a loop that
     * fills a carried buffer row by row then costs a row per step, not a copy of the whole buffer.
     */
    private static Instruction dynamicUpdateSlice(Op op, ProgramBuilder b) {
        TensorType t = op.operand(0).tensorType();
        long[] dims = t.shape().dims(), update = op.operand(1).tensorType().shape().dims();
        DType[] types = operandTypes(op);
        int[] in = b.slots(op.operands());
        int[] candidates = b.dyingOperands(op).contains(0) ? new int[] {in[0]} : new int[0];
        int out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        long n = t.shape().size();
        return f -> {
            MemorySegment[] s = segments(f, in);
            Buffer o = ProgramBuilder.output(f, candidates, cls);
            if (o != f.slots[in[0]]) {
                DataMovement.copy(t.dtype(), s[0], o.segment, n);
            }
            DataMovement.insert(t.dtype(), s[1], update, o.segment, dims,
                    DynamicSlices.starts(types, s, 2, dims, update));
            f.define(out, o);
        };
    }

    private static DType[] operandTypes(Op op) {
        return op.operands().stream().map(v -> v.tensorType().dtype()).toArray(DType[]::new);
    }

    private static MemorySegment[] segments(CpuFrame f, int[] slots) {
        MemorySegment[] s = new MemorySegment[slots.length];
        for (int i = 0; i < slots.length; i++) {
            s[i] = f.slots[slots[i]].segment;
        }
        return s;
    }

    private static Instruction concatenate(Op op, ProgramBuilder b) {
        int axis = Math.toIntExact(intAttr(op, "dimension"));
        int[] in = b.slots(op.operands());
        long[][] partDims = op.operands().stream().map(v -> v.tensorType().shape().dims()).toArray(long[][]::new);
        TensorType rt = op.result().tensorType();
        long[] outDims = rt.shape().dims();
        int out = b.slot(op.result());
        int cls = b.sizeClass(rt);
        return f -> {
            MemorySegment[] parts = new MemorySegment[in.length];
            for (int i = 0; i < in.length; i++) {
                parts[i] = f.slots[in[i]].segment;
            }
            Buffer o = f.allocate(cls);
            DataMovement.concatenate(rt.dtype(), parts, partDims, axis, outDims, o.segment);
            f.define(out, o);
        };
    }

    private static Instruction iota(Op op, ProgramBuilder b) {
        TensorType rt = op.result().tensorType();
        int axis = Math.toIntExact(intAttr(op, "iota_dimension"));
        long[] dims = rt.shape().dims();
        int out = b.slot(op.result());
        int cls = b.sizeClass(rt);
        return f -> {
            Buffer o = f.allocate(cls);
            DataMovement.iota(rt.dtype(), dims, axis, o.segment);
            f.define(out, o);
        };
    }

    /** The matmul form of {@link CanonicalMatmul}, a side transposed where {@code fold-transposes} folded one in. */
    private static Instruction dotGeneral(Op op, ProgramBuilder b) {
        CanonicalMatmul mm = CanonicalMatmul.of(op);
        long batches = mm.batch();
        int m = mm.m(), k = mm.k(), n = mm.n();
        boolean ta = mm.transA(), tb = mm.transB();
        DType t = op.operand(0).tensorType().dtype();
        int lhs = b.slot(op.operand(0)), rhs = b.slot(op.operand(1)), out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        return f -> {
            Buffer o = f.allocate(cls);
            DotGeneral.matmul(t, f.slots[lhs].segment, f.slots[rhs].segment, o.segment, batches, m, k, n, ta, tb);
            f.define(out, o);
        };
    }

    /** A one-operand op writing a fresh buffer. */
    private static Instruction unaryStructural(Op op, ProgramBuilder b, BiConsumer<MemorySegment,
            MemorySegment> kernel) {
        int in = b.slot(op.operand(0)), out = b.slot(op.result());
        int cls = b.sizeClass(op.result().tensorType());
        return f -> {
            Buffer o = f.allocate(cls);
            kernel.accept(f.slots[in].segment, o.segment);
            f.define(out, o);
        };
    }

    static long[] longs(Op op, String name) {
        if (op.attr(name) instanceof Attr.I64Array a) {
            return a.toArray();
        }
        throw new IllegalArgumentException("missing array attribute " + name);
    }

    static long intAttr(Op op, String name) {
        if (op.attr(name) instanceof Attr.Int i) {
            return i.value();
        }
        throw new IllegalArgumentException("missing integer attribute " + name);
    }

    private static int[] ints(long[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = Math.toIntExact(v[i]);
        }
        return out;
    }

    private static long[] ones(int n) {
        long[] v = new long[n];
        Arrays.fill(v, 1);
        return v;
    }
}
