package dev.weft.backends.gpu.exec;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.backends.gpu.ptx.CopyKernels;
import dev.weft.backends.gpu.ptx.ElementwiseKernels;
import dev.weft.backends.gpu.ptx.GemmKernel;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.backends.gpu.ptx.ReduceKernels;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.CanonicalMatmul;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.LibraryReduction;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Turns {@code @main} of a lowered module into a {@link GpuPlan}: a slot per tensor value, the kernels of every op
 * (generated once, here), and the release of each value after its last use. Needs no GPU. Ops it cannot run on the
 * GPU (a reduction with a body other than one add/multiply/maximum/minimum, a non-canonical {@code dot_general},
 * negative padding) are reported as {@link WeftException}s at the op's source line. A counted {@code while}
 * ({@link Attr.CountedLoop}) becomes a {@link GpuStep.Fori}, whose condition is never run.
 */
public final class GpuPlanner {
    private final Map<Value, Integer> slots = new IdentityHashMap<>();
    private final List<Kernel> kernels = new ArrayList<>();
    private int nextSlot;

    private GpuPlanner() {
    }

    public static GpuPlan plan(Module module, PtxTarget target) {
        GpuPlanner p = new GpuPlanner();
        BlockPlan main = p.block(module.main().body());
        return new GpuPlan(main, p.nextSlot, List.copyOf(p.kernels), target.module(p.kernels));
    }

    private int define(Value v) {
        if (!(v.type() instanceof TensorType)) {
            return -1;
        }
        int s = nextSlot++;
        slots.put(v, s);
        return s;
    }

    private int slot(Value v) {
        if (!(v.type() instanceof TensorType)) {
            return -1;
        }
        Integer s = slots.get(v);
        if (s == null) {
            throw new IllegalStateException("value used before its definition: " + v);
        }
        return s;
    }

    private int[] slots(List<Value> values) {
        return values.stream().mapToInt(this::slot).toArray();
    }

    private BlockPlan block(Block b) {
        int[] args = b.arguments().stream().mapToInt(this::define).toArray();
        List<Op> ops = b.ops().subList(0, b.ops().size() - 1);
        Map<Value, Integer> lastUse = new IdentityHashMap<>();
        for (int k = 0; k < ops.size(); k++) {
            int at = k;
            forEachUse(ops.get(k), v -> lastUse.put(v, at));
        }
        Set<Value> results = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        results.addAll(b.results());
        List<GpuStep> steps = new ArrayList<>();
        for (Value a : b.arguments()) {
            if (a.type() instanceof TensorType && !lastUse.containsKey(a) && !results.contains(a)) {
                steps.add(new GpuStep.Release(slot(a)));
            }
        }
        List<Set<Value>> dyingAt = new ArrayList<>();
        for (int k = 0; k < ops.size(); k++) {
            int at = k;
            Set<Value> dying = new LinkedHashSet<>();
            forEachUse(ops.get(k), v -> {
                if (lastUse.get(v) == at) {
                    dying.add(v);
                }
            });
            dyingAt.add(dying);
        }
        Set<Value> definedHere = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        definedHere.addAll(b.arguments());
        for (int k = 0; k < ops.size(); k++) {
            Op op = ops.get(k);
            try {
                lower(op, steps);
            } catch (IllegalArgumentException e) {
                throw new WeftException(op.location(), "cannot run " + op.name() + " on the GPU: " + e.getMessage(),
                        e);
            }
            definedHere.addAll(op.results());
            Set<Value> release = new LinkedHashSet<>();
            for (Value v : op.results()) {
                if (!lastUse.containsKey(v)) {
                    release.add(v);
                }
            }
            release.addAll(dyingAt.get(k));
            for (Value v : release) {
                if (definedHere.contains(v) && !results.contains(v) && v.type() instanceof TensorType) {
                    steps.add(new GpuStep.Release(slot(v)));
                }
            }
        }
        return new BlockPlan(args, List.copyOf(steps), slots(b.results()));
    }

    /** The operands of {@code op} and of every op nested in its regions. */
    private static void forEachUse(Op op, Consumer<Value> use) {
        IrWalk.forEachOp(op, o -> o.operands().forEach(use));
    }

    private String kernelName(Op op) {
        return "weft_k" + kernels.size() + "_" + op.name().substring(op.name().indexOf('.') + 1);
    }

    private Kernel add(Kernel k) {
        kernels.add(k);
        return k;
    }

    private int allocate(Value v, List<GpuStep> steps) {
        int s = define(v);
        steps.add(new GpuStep.Allocate(s, v.tensorType().byteSize()));
        return s;
    }

    private void lower(Op op, List<GpuStep> steps) {
        String name = op.name();
        if (op.elementwise() != null || name.equals(StableHlo.FUSION)) {
            Kernel k = add(name.equals(StableHlo.FUSION) ? ElementwiseKernels.fusion(op, kernelName(op))
                    : ElementwiseKernels.single(op, kernelName(op)));
            int[] in = slots(op.operands());
            int[] params = Arrays.copyOf(in, in.length + op.results().size());
            for (int r = 0; r < op.results().size(); r++) {
                params[in.length + r] = allocate(op.results().get(r), steps);
            }
            steps.add(new GpuStep.Launch(k, params));
            return;
        }
        switch (name) {
            case StableHlo.CONSTANT -> {
                if (!(op.attr("value") instanceof Attr.Dense d)) {
                    throw new IllegalArgumentException("constant without a dense value");
                }
                steps.add(new GpuStep.Constant(define(op.result()), d.data()));
            }
            case StableHlo.RESHAPE -> {
                int from = slot(op.operand(0));
                steps.add(new GpuStep.Alias(from, define(op.result())));
            }
            case StableHlo.AFTER_ALL -> define(op.result());
            case StableHlo.TRANSPOSE, StableHlo.BROADCAST_IN_DIM, StableHlo.SLICE -> gather(op, steps);
            case StableHlo.CONCATENATE -> concatenate(op, steps);
            case StableHlo.PAD -> pad(op, steps);
            case StableHlo.DYNAMIC_SLICE, StableHlo.DYNAMIC_UPDATE_SLICE -> dynamicSlice(op, steps);
            case StableHlo.IOTA -> {
                TensorType t = op.result().tensorType();
                Kernel k = add(CopyKernels.iota(kernelName(op), t.dtype(), t.shape().dims(),
                        Math.toIntExact(intAttr(op, "iota_dimension"))));
                steps.add(new GpuStep.Launch(k, new int[] {allocate(op.result(), steps)}));
            }
            case StableHlo.REDUCE -> reduce(op, steps);
            case StableHlo.DOT_GENERAL -> dotGeneral(op, steps);
            case StableHlo.CUSTOM_CALL -> {
                int[] in = slots(op.operands());
                int[] out = op.results().stream().mapToInt(this::define).toArray();
                long[] bytes = op.results().stream()
                        .mapToLong(v -> v.type() instanceof TensorType t ? t.byteSize() : 0).toArray();
                steps.add(new GpuStep.CustomCall(op, in, out, bytes));
            }
            case StableHlo.WHILE -> {
                int[] in = slots(op.operands());
                Optional<Attr.CountedLoop> counted = Attr.CountedLoop.of(op);
                if (counted.isPresent()) {
                    BlockPlan body = block(op.regions().get(1));
                    steps.add(new GpuStep.Fori(in, body, counted.get().trips(),
                            op.results().stream().mapToInt(this::define).toArray()));
                    return;
                }
                BlockPlan cond = block(op.regions().get(0)), body = block(op.regions().get(1));
                steps.add(new GpuStep.While(in, cond, body, op.results().stream().mapToInt(this::define).toArray()));
            }
            case StableHlo.IF -> {
                int pred = slot(op.operand(0));
                BlockPlan t = block(op.regions().get(0)), f = block(op.regions().get(1));
                steps.add(new GpuStep.If(pred, t, f, op.results().stream().mapToInt(this::define).toArray()));
            }
            default -> throw new IllegalArgumentException("no GPU implementation");
        }
    }

    private void gather(Op op, List<GpuStep> steps) {
        TensorType in = op.operand(0).tensorType(), out = op.result().tensorType();
        long[] inDims = in.shape().dims(), outDims = out.shape().dims(), inStrides = in.shape().strides();
        long[] src = new long[outDims.length];
        long base = 0;
        switch (op.name()) {
            case StableHlo.TRANSPOSE -> {
                long[] perm = longs(op, "permutation");
                for (int i = 0; i < src.length; i++) {
                    src[i] = inStrides[(int) perm[i]];
                }
            }
            case StableHlo.BROADCAST_IN_DIM -> {
                long[] map = longs(op, "broadcast_dimensions");
                for (int j = 0; j < map.length; j++) {
                    if (inDims[j] != 1) {
                        src[(int) map[j]] = inStrides[j];
                    }
                }
            }
            default -> {
                long[] start = longs(op, "start_indices");
                long[] step = op.attr("strides") == null ? null : longs(op, "strides");
                for (int i = 0; i < src.length; i++) {
                    src[i] = inStrides[i] * (step == null ? 1 : step[i]);
                    base += start[i] * inStrides[i];
                }
            }
        }
        Kernel k = add(CopyKernels.affine(kernelName(op), in.dtype(), outDims, src, base, out.shape().strides(), 0));
        int from = slot(op.operand(0));
        steps.add(new GpuStep.Launch(k, new int[] {from, allocate(op.result(), steps)}));
    }

    /**
     * A gather from a start read on the device, or (dynamic_update_slice) a copy of the operand and a block write
     * over it; the starts never travel to the host, so such ops in a loop body cost no synchronisation.
     */
    private void dynamicSlice(Op op, List<GpuStep> steps) {
        TensorType operand = op.operand(0).tensorType();
        boolean update = op.name().equals(StableHlo.DYNAMIC_UPDATE_SLICE);
        int first = update ? 2 : 1;
        DType[] startTypes = op.operands().subList(first, op.operands().size()).stream()
                .map(v -> v.tensorType().dtype()).toArray(DType[]::new);
        long[] dims = operand.shape().dims();
        int[] in = slots(op.operands());
        int[] params = new int[startTypes.length + 2];
        System.arraycopy(in, first, params, 1, startTypes.length);
        if (!update) {
            Kernel k = add(CopyKernels.dynamicSlice(kernelName(op), operand.dtype(), dims, longs(op, "slice_sizes"),
                    startTypes));
            params[0] = in[0];
            params[params.length - 1] = allocate(op.result(), steps);
            steps.add(new GpuStep.Launch(k, params));
            return;
        }
        int result = allocate(op.result(), steps);
        long[] rowMajor = operand.shape().strides();
        Kernel copy = add(CopyKernels.affine(kernelName(op) + "_copy", operand.dtype(), dims, rowMajor, 0, rowMajor,
                0));
        steps.add(new GpuStep.Launch(copy, new int[] {in[0], result}));
        Kernel k = add(CopyKernels.dynamicUpdate(kernelName(op), operand.dtype(), dims,
                op.operand(1).tensorType().shape().dims(), startTypes));
        params[0] = in[1];
        params[params.length - 1] = result;
        steps.add(new GpuStep.Launch(k, params));
    }

    private void concatenate(Op op, List<GpuStep> steps) {
        int axis = Math.toIntExact(intAttr(op, "dimension"));
        TensorType out = op.result().tensorType();
        long[] outStrides = out.shape().strides();
        int result = allocate(op.result(), steps);
        long offset = 0;
        for (Value part : op.operands()) {
            long[] dims = part.tensorType().shape().dims();
            Kernel k = add(CopyKernels.affine(kernelName(op), out.dtype(), dims, part.tensorType().shape().strides(),
                    0, outStrides, offset * outStrides[axis]));
            steps.add(new GpuStep.Launch(k, new int[] {slot(part), result}));
            offset += dims[axis];
        }
    }

    private void pad(Op op, List<GpuStep> steps) {
        TensorType in = op.operand(0).tensorType();
        long[] low = longs(op, "edge_padding_low"), high = longs(op, "edge_padding_high");
        long[] interior = op.attr("interior_padding") == null ? new long[low.length] : longs(op, "interior_padding");
        for (int i = 0; i < low.length; i++) {
            if (low[i] < 0 || high[i] < 0 || interior[i] < 0) {
                throw new IllegalArgumentException("negative padding is not supported");
            }
        }
        Kernel k = add(CopyKernels.pad(kernelName(op), in.dtype(), in.shape().dims(), low, interior,
                op.result().tensorType().shape().dims()));
        int src = slot(op.operand(0)), value = slot(op.operand(1));
        steps.add(new GpuStep.Launch(k, new int[] {src, value, allocate(op.result(), steps)}));
    }

    private void reduce(Op op, List<GpuStep> steps) {
        if (op.operands().size() != 2) {
            throw new IllegalArgumentException("only single-operand reductions are supported");
        }
        ElementwiseOp combiner = combiner(op.regions().getFirst());
        TensorType in = op.operand(0).tensorType();
        int[] axes = Arrays.stream(longs(op, "dimensions")).mapToInt(Math::toIntExact).toArray();
        ReduceKernels.Reduction r = ReduceKernels.reduce(kernelName(op), combiner, in.dtype(), in.shape().dims(),
                axes);
        r.passes().forEach(this::add);
        int src = slot(op.operand(0)), init = slot(op.operand(1));
        int out = allocate(op.result(), steps);
        if (op.result().tensorType().shape().size() == 0) {
            return;
        }
        if (r.passes().size() == 1) {
            steps.add(new GpuStep.Launch(r.passes().getFirst(), new int[] {src, init, out}));
            return;
        }
        int partials = nextSlot++;
        steps.add(new GpuStep.Allocate(partials, r.partials() * in.dtype().byteSize()));
        steps.add(new GpuStep.Launch(r.passes().get(0), new int[] {src, partials}));
        steps.add(new GpuStep.Launch(r.passes().get(1), new int[] {partials, init, out}));
        steps.add(new GpuStep.Release(partials));
    }

    /** The op of a reduction body that combines its two arguments once and returns the result. */
    private static ElementwiseOp combiner(Block body) {
        ElementwiseOp combiner = LibraryReduction.combiner(body);
        if (combiner == null) {
            throw new IllegalArgumentException("only add, multiply, maximum and minimum reduction bodies are supported");
        }
        return combiner;
    }

    /**
     * Only the canonical matmul form, untransposed: batch axes first on both sides, contracting lhs-last/rhs-first
     * (the GPU pipeline does not run {@code fold-transposes}).
     */
    private void dotGeneral(Op op, List<GpuStep> steps) {
        CanonicalMatmul mm = CanonicalMatmul.of(op);
        if (mm.transposed()) {
            throw new IllegalArgumentException("the GPU planner runs untransposed matmuls only");
        }
        long batch = mm.batch();
        int m = mm.m(), k = mm.k(), n = mm.n();
        DType t = op.operand(0).tensorType().dtype();
        Kernel fallback = add(GemmKernel.generate(kernelName(op), t, m, n, k, Math.toIntExact(batch)));
        int a = slot(op.operand(0)), b = slot(op.operand(1));
        steps.add(new GpuStep.Matmul(t, m, n, k, Math.toIntExact(batch), a, b, allocate(op.result(), steps), fallback));
    }

    private static long[] longs(Op op, String name) {
        if (op.attr(name) instanceof Attr.I64Array a) {
            return a.toArray();
        }
        throw new IllegalArgumentException("missing array attribute " + name);
    }

    private static long intAttr(Op op, String name) {
        if (op.attr(name) instanceof Attr.Int i) {
            return i.value();
        }
        throw new IllegalArgumentException("missing integer attribute " + name);
    }
}
