package dev.weft.backends.cpu.exec;

import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.ElementwiseKernel;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * {@code weft.fusion}. A region that {@link FusedLoopSpec} describes runs as one generated loop
 * ({@link FusedLoopGenerator}) reading each input element once and writing each result element once. Any other
 * region (one holding an op on a dtype its kernel rejects) runs chunk by chunk ({@value #CHUNK} elements), one
 * kernel per op, each intermediate living in a chunk-sized scratch buffer, so no full-size temporaries exist; on
 * either path a result may overwrite a dying input that it reads element for element. A view or piecewise argument
 * ({@link FusionViews}) is read in place by the generated loop, row by row, and copied to a scratch buffer first by
 * the chunked path; the pad values of piecewise arguments are read from rows filled once per run. In the chunked path
 * registers {@code 0..views-1} are the inputs, then constants of the fused shape: a full-size one is read through a
 * window per chunk, a rank-0 one (only read by broadcasts) as it is. A {@code broadcast_in_dim} of a scalar is a
 * scratch register filled once per run; each chunk is read completely before it is written.
 */
final class FusionInstruction {
    static final int CHUNK = 4096;

    private record FusedOp(ElementwiseKernel kernel, int a, int b, int c, int out) {
    }

    private FusionInstruction() {
    }

    static Instruction compile(Op op, ProgramBuilder b) {
        List<Attr.Dense> constants = new ArrayList<>();
        long n = op.results().getFirst().tensorType().shape().size();
        return FusedLoopSpec.of(op, n, constants)
                .map(spec -> generated(op, b, b.fusedLoop(spec, n), constants, n))
                .orElseGet(() -> chunked(op, b));
    }

    private static Instruction generated(Op op, ProgramBuilder b, FusedLoop loop, List<Attr.Dense> constants,
                                         long n) {
        int[] inputSlots = b.slots(op.operands());
        MemorySegment[] constantData = constants.stream().map(Attr.Dense::data).toArray(MemorySegment[]::new);
        FusionViews views = FusionViews.of(op,
                constants.stream().mapToLong(d -> d.type().dtype().byteSize()).toArray());
        int results = op.results().size();
        int[] resultSlot = new int[results];
        int[] resultClass = new int[results];
        int[][] candidates = new int[results][];
        for (int r = 0; r < results; r++) {
            resultSlot[r] = b.slot(op.results().get(r));
            resultClass[r] = b.sizeClass(op.results().get(r).tensorType());
            candidates[r] = unshifted(b.inPlaceCandidates(op, r), op, b, views);
        }
        int[] fillClass = fillClasses(views, b);
        return f -> {
            MemorySegment[] in = sources(f, inputSlots, constantData,
                    views == null ? inputSlots.length + constantData.length : views.sources());
            MemorySegment[] out = new MemorySegment[results];
            for (int r = 0; r < results; r++) {
                Buffer o = ProgramBuilder.output(f, candidates[r], resultClass[r]);
                f.define(resultSlot[r], o);
                out[r] = o.segment;
            }
            try {
                if (views == null) {
                    FusedLoopRunner.run(loop, in, out, n);
                } else {
                    fillRows(views, f, fillClass, in);
                    try {
                        FusedLoopRunner.run(views, loop, in, out);
                    } finally {
                        recycleFillRows(f, fillClass, in);
                    }
                }
            } catch (ArithmeticException e) {
                // idiv and ldiv say "/ by zero"; report it as the eager kernels do
                throw new ArithmeticException(Elementwise.DIVISION_BY_ZERO);
            }
        };
    }

    /** {@code candidates} less the slots of operands that {@code views} reads shifted. */
    private static int[] unshifted(int[] candidates, Op op, ProgramBuilder b, FusionViews views) {
        if (views == null) {
            return candidates;
        }
        return Arrays.stream(candidates).filter(slot -> IntStream.range(0, op.operands().size())
                .noneMatch(j -> views.isShifted(j) && b.slot(op.operand(j)) == slot)).toArray();
    }

    /**
     * A fused loop's sources ({@code length} of them): the operands' buffers in {@code inputSlots}, then the
     * constants; the rest (fill rows) is left for {@link #fillRows}.
     */
    static MemorySegment[] sources(CpuFrame f, int[] inputSlots, MemorySegment[] constantData, int length) {
        MemorySegment[] sources = new MemorySegment[length];
        for (int i = 0; i < inputSlots.length; i++) {
            sources[i] = f.slots[inputSlots[i]].segment;
        }
        System.arraycopy(constantData, 0, sources, inputSlots.length, constantData.length);
        return sources;
    }

    static int[] fillClasses(FusionViews views, ProgramBuilder b) {
        int[] out = new int[views == null ? 0 : views.fillRows()];
        for (int k = 0; k < out.length; k++) {
            out[k] = b.sizeClass(views.fillRowBytes(k));
        }
        return out;
    }

    /** Puts the fill rows of {@code views} at the end of {@code sources}, filled. */
    static void fillRows(FusionViews views, CpuFrame f, int[] fillClass, MemorySegment[] sources) {
        int first = sources.length - fillClass.length;
        for (int k = 0; k < fillClass.length; k++) {
            sources[first + k] = f.allocateSegment(fillClass[k]);
        }
        views.fill(sources);
    }

    static void recycleFillRows(CpuFrame f, int[] fillClass, MemorySegment[] sources) {
        int first = sources.length - fillClass.length;
        for (int k = 0; k < fillClass.length; k++) {
            f.recycle(fillClass[k], sources[first + k]);
        }
    }

    /** The chunked interpreter of the region, whatever ops it holds. */
    static Instruction chunked(Op op, ProgramBuilder b) {
        Block region = op.regions().getFirst();
        long n = op.results().getFirst().tensorType().shape().size();
        int chunk = (int) Math.min(CHUNK, Math.max(1, n));
        Map<Value, Integer> reg = new IdentityHashMap<>();
        List<Integer> viewSlots = new ArrayList<>();
        List<MemorySegment> constants = new ArrayList<>();
        List<Integer> registerBytes = new ArrayList<>();
        for (int i = 0; i < region.arguments().size(); i++) {
            reg.put(region.arguments().get(i), i);
            viewSlots.add(b.slot(op.operand(i)));
            registerBytes.add(op.operand(i).tensorType().dtype().byteSize());
        }
        List<Op> body = region.ops().subList(0, region.ops().size() - 1);
        Map<Integer, Integer> splatOf = new HashMap<>();
        for (Op inner : body) {
            if (inner.name().equals(StableHlo.CONSTANT) && inner.attr("value") instanceof Attr.Dense d
                    && d.type().shape().size() == n) {
                reg.put(inner.result(), registerBytes.size());
                registerBytes.add(d.type().dtype().byteSize());
                constants.add(d.data());
            }
        }
        int views = registerBytes.size();
        List<FusedOp> fused = new ArrayList<>();
        for (Op inner : body) {
            if (reg.containsKey(inner.result())) {
                continue;
            }
            if (inner.name().equals(StableHlo.BROADCAST_IN_DIM)) {
                Integer scalar = reg.get(inner.operand(0));
                if (scalar == null || scalar >= views || inner.operand(0).tensorType().shape().rank() != 0) {
                    throw new IllegalArgumentException("fusion broadcasts something other than a scalar argument");
                }
                splatOf.put(registerBytes.size(), scalar);
                reg.put(inner.result(), registerBytes.size());
                registerBytes.add(inner.result().tensorType().dtype().byteSize());
                continue;
            }
            if (inner.elementwise() == null) {
                throw new IllegalArgumentException("fusion contains non-elementwise op " + inner.name());
            }
            int[] in = inner.operands().stream().mapToInt(v -> {
                Integer r = reg.get(v);
                if (r == null) {
                    throw new IllegalArgumentException("fusion region uses a value it does not define");
                }
                return r;
            }).toArray();
            int out = registerBytes.size();
            reg.put(inner.result(), out);
            registerBytes.add(inner.result().tensorType().dtype().byteSize());
            fused.add(new FusedOp(OpCompilers.kernel(inner), in[0], in.length > 1 ? in[1] : -1,
                    in.length > 2 ? in[2] : -1, out));
        }
        int registers = registerBytes.size();
        int[] bytesPerElement = registerBytes.stream().mapToInt(Integer::intValue).toArray();
        int[] scratchClass = new int[registers];
        for (int r = views; r < registers; r++) {
            scratchClass[r] = b.sizeClass((long) chunk * bytesPerElement[r]);
        }
        int results = op.results().size();
        int[] resultReg = region.results().stream().mapToInt(reg::get).toArray();
        int[] resultSlot = new int[results];
        int[] resultClass = new int[results];
        int[][] candidates = new int[results][];
        for (int r = 0; r < results; r++) {
            TensorType t = op.results().get(r).tensorType();
            resultSlot[r] = b.slot(op.results().get(r));
            resultClass[r] = b.sizeClass(t);
            candidates[r] = b.inPlaceCandidates(op, r);
        }
        int[] inputSlots = viewSlots.stream().mapToInt(Integer::intValue).toArray();
        boolean[] windowed = new boolean[views];
        for (int v = 0; v < views; v++) {
            windowed[v] = v >= inputSlots.length || region.arguments().get(v).tensorType().shape().size() == n;
        }
        FusionViews assembled = FusionViews.of(op, new long[0]);
        int[] windowClass = new int[inputSlots.length];
        for (int v = 0; v < inputSlots.length; v++) {
            windowClass[v] = assembled != null && assembled.isAssembled(v) ? b.sizeClass(n * bytesPerElement[v]) : -1;
        }
        int[] operandSlots = b.slots(op.operands());
        int[] fillClass = fillClasses(assembled, b);
        int[] splatRegs = splatOf.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        int[] splatSources = Arrays.stream(splatRegs).map(splatOf::get).toArray();
        MemorySegment[] constantData = constants.toArray(MemorySegment[]::new);
        FusedOp[] program = fused.toArray(FusedOp[]::new);
        return f -> {
            MemorySegment[] full = new MemorySegment[views];
            for (int i = 0; i < inputSlots.length; i++) {
                full[i] = f.slots[inputSlots[i]].segment;
            }
            if (assembled != null) {
                copyWindows(assembled, f, operandSlots, fillClass, windowClass, full);
            }
            System.arraycopy(constantData, 0, full, inputSlots.length, constantData.length);
            MemorySegment[] outs = new MemorySegment[results];
            for (int r = 0; r < results; r++) {
                Buffer o = ProgramBuilder.output(f, candidates[r], resultClass[r]);
                f.define(resultSlot[r], o);
                outs[r] = o.segment;
            }
            MemorySegment[] regs = new MemorySegment[registers];
            for (int r = views; r < registers; r++) {
                regs[r] = f.allocateSegment(scratchClass[r]);
            }
            for (int i = 0; i < splatRegs.length; i++) {
                splat(full[splatSources[i]], regs[splatRegs[i]], chunk);
            }
            for (int v = 0; v < views; v++) {
                regs[v] = full[v];
            }
            for (long off = 0; off < n; off += chunk) {
                long len = Math.min(chunk, n - off);
                for (int v = 0; v < views; v++) {
                    if (windowed[v]) {
                        regs[v] = full[v].asSlice(off * bytesPerElement[v], len * bytesPerElement[v]);
                    }
                }
                for (FusedOp p : program) {
                    p.kernel.apply(regs[p.a], p.b < 0 ? null : regs[p.b], p.c < 0 ? null : regs[p.c], regs[p.out],
                            len);
                }
                for (int r = 0; r < results; r++) {
                    int es = bytesPerElement[resultReg[r]];
                    MemorySegment.copy(regs[resultReg[r]], 0, outs[r], off * es, len * es);
                }
            }
            for (int r = views; r < registers; r++) {
                f.recycle(scratchClass[r], regs[r]);
            }
            for (int i = 0; i < inputSlots.length; i++) {
                if (windowClass[i] >= 0) {
                    f.recycle(windowClass[i], full[i]);
                }
            }
        };
    }

    /**
     * Replaces each view or piecewise argument in {@code full} by a copy in a buffer of class {@code windowClass}
     * (-1 for other arguments) assembled from the operands in {@code operandSlots}.
     */
    private static void copyWindows(FusionViews assembled, CpuFrame f, int[] operandSlots, int[] fillClass,
                                    int[] windowClass, MemorySegment[] full) {
        MemorySegment[] sources = new MemorySegment[assembled.sources()];
        for (int j = 0; j < operandSlots.length; j++) {
            sources[j] = f.slots[operandSlots[j]].segment;
        }
        fillRows(assembled, f, fillClass, sources);
        for (int i = 0; i < windowClass.length; i++) {
            if (windowClass[i] >= 0) {
                full[i] = f.allocateSegment(windowClass[i]);
                assembled.copyWindow(i, sources, full[i]);
            }
        }
        recycleFillRows(f, fillClass, sources);
    }

    /** Fills the first {@code count} elements of {@code out} with the one element of {@code scalar}. */
    private static void splat(MemorySegment scalar, MemorySegment out, int count) {
        long es = scalar.byteSize();
        MemorySegment.copy(scalar, 0, out, 0, es);
        for (long done = 1; done < count; done *= 2) {
            MemorySegment.copy(out, 0, out, done * es, Math.min(done, count - done) * es);
        }
    }
}
