package dev.weft.backends.cpu.exec;

import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.spi.NativeMemory;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.tracer.Executable;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Runs the {@code @main} function of a lowered module on the CPU.
 *
 * <p>Construction decodes every op once into an instruction list over frame slots, so a run does no lookups by
 * name. Each run has its own frame, so one executable may run on several threads at once. Buffers are reference
 * counted; an operand listed in an op's {@code weft.last_use} is released after the op, and a released buffer
 * returns to a pool keyed by byte size from which later ops of the same run allocate. An elementwise op or fusion
 * may write its result over a dying operand of the same byte size that nothing else references and that it reads
 * element for element (not through a shifted window or piece). Arguments are never written; results never alias
 * the arguments or the module's constants. Errors raised while running an op are {@link WeftException}s at that
 * op's source location.
 *
 * <p>A run that completes hands its frame, pools included, to the next run, so a repeated call reuses the
 * intermediates' buffers (the executable keeps the pools of one run alive); runs on several threads at once
 * take fresh frames. Results are never pooled: they belong to the returned tensors.
 */
public final class CpuExecutable implements Executable {
    private final Module module;
    private final TensorType[] argumentTypes;
    private final TensorType[] resultTypes;
    private final Aval[] argumentAvals;
    private final Aval[] resultAvals;
    /** The frame of the last completed run, free for the next one; {@code null} while a run holds it. */
    private final AtomicReference<Frame> idleFrame = new AtomicReference<>();
    private final CompiledBlock main;
    private final int slotCount;
    private final Supplier<?>[] scratchFactories;
    private final long[] classBytes;
    private final LongAdder allocations = new LongAdder();

    /** An executable whose custom calls (if any) are looked up in an empty registry. */
    public CpuExecutable(Module module) {
        this(module, new CustomCallRegistry());
    }

    /**
     * Decodes {@code module}'s {@code @main}; fails with a {@link WeftException} at the op's location for an op,
     * attribute or custom-call target the CPU executor cannot run.
     */
    public CpuExecutable(Module module, CustomCallRegistry customCalls) {
        this(module, customCalls, OpCompilers.standard());
    }

    /** Decodes {@code module}'s {@code @main} with the op compilers {@code compilers} (tests swap some). */
    CpuExecutable(Module module, CustomCallRegistry customCalls, Map<String, OpCompiler> compilers) {
        this(module, customCalls, compilers, true);
    }

    /**
     * As above; {@code straightLoops} false runs every loop on the general path ({@link LoopGenerator}), which
     * tests compare the straight-line one ({@link StraightLoop}) with.
     */
    CpuExecutable(Module module, CustomCallRegistry customCalls, Map<String, OpCompiler> compilers,
                  boolean straightLoops) {
        this.module = module;
        Func f = module.main();
        this.argumentTypes = tensorTypes(f.argumentTypes(), "argument");
        this.resultTypes = tensorTypes(f.resultTypes(), "result");
        this.argumentAvals = Arrays.stream(argumentTypes).map(TensorType::aval).toArray(Aval[]::new);
        this.resultAvals = Arrays.stream(resultTypes).map(TensorType::aval).toArray(Aval[]::new);
        ProgramBuilder builder = new ProgramBuilder(compilers, customCalls, straightLoops);
        this.main = builder.compile(f.body());
        this.slotCount = builder.slotCount();
        this.scratchFactories = builder.scratchFactories();
        this.classBytes = builder.classBytes();
    }

    private static TensorType[] tensorTypes(List<Type> types, String what) {
        TensorType[] out = new TensorType[types.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(types.get(i) instanceof TensorType t)) {
                throw new WeftException(SourceLocation.UNKNOWN, "@main " + what + " " + i + " is not a tensor: "
                        + types.get(i).mlir());
            }
            out[i] = t;
        }
        return out;
    }

    public Module module() {
        return module;
    }

    /** Buffers allocated fresh (not taken from a pool) by all runs so far, scratch buffers included. */
    public long allocationCount() {
        return allocations.sum();
    }

    @Override
    public List<Tensor> run(List<Tensor> args) {
        if (args.size() != argumentTypes.length) {
            throw new WeftException(SourceLocation.capture(),
                    "expected " + argumentTypes.length + " arguments, got " + args.size());
        }
        Frame f = idleFrame.getAndSet(null);
        if (f == null) {
            f = new Frame(slotCount, scratchFactories, classBytes, allocations);
        }
        for (int i = 0; i < argumentTypes.length; i++) {
            f.define(main.argSlots()[i], new Buffer(argument(args.get(i), i), Buffer.Kind.READ_ONLY, -1));
        }
        main.run(f);
        List<Tensor> results = new ArrayList<>(resultTypes.length);
        for (int i = 0; i < resultTypes.length; i++) {
            Buffer b = f.slots[main.resultSlots()[i]];
            MemorySegment seg = b.segment;
            if (b.kind == Buffer.Kind.READ_ONLY) {
                seg = NativeMemory.allocateUninitialized(resultTypes[i].byteSize());
                MemorySegment.copy(b.segment, 0, seg, 0, resultTypes[i].byteSize());
            }
            b.escaped = true;
            results.add(TensorAccess.concrete(resultAvals[i], seg));
        }
        f.reset();
        idleFrame.set(f);
        return results;
    }

    private MemorySegment argument(Tensor t, int i) {
        TensorType expected = argumentTypes[i];
        MemorySegment data = TensorAccess.data(t);
        if (data == null) {
            throw new TracedValueException(SourceLocation.capture(), "argument " + i + " is a traced tensor");
        }
        if (TensorAccess.aval(t).equals(argumentAvals[i])) {
            return data;
        }
        if (t.dtype() != expected.dtype()) {
            throw new DTypeException(SourceLocation.capture(), "argument " + i + " has dtype "
                    + t.dtype().specName() + ", expected " + expected.dtype().specName());
        }
        if (!Shape.of(t.shape()).equals(expected.shape())) {
            throw new ShapeException(SourceLocation.capture(), "argument " + i + " does not match "
                    + expected.mlir());
        }
        return data;
    }
}
