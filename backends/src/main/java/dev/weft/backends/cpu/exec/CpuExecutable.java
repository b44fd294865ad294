package dev.weft.backends.cpu.exec;

import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.spi.NativeMemory;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.tracer.Executable;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * element for element (not through a shifted window or piece). Arguments are never written, but
 * donated ({@code Tensor.donate()}) ones, which an op may write over like a dying temporary and which, once dead
 * (at once if no op reads them), return to the pool like one, so that a result of their size may take them, as
 * with JAX's {@code donate_argnums}; results never alias each other, the other arguments or the module's
 * constants. Errors raised while running an op are {@link WeftException}s at that op's source location.
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
    private final AtomicReference<CpuFrame> idleFrame = new AtomicReference<>();
    private final CompiledBlock main;
    private final int slotCount;
    private final Supplier<?>[] scratchFactories;
    private final long[] classBytes;
    /** Arguments no op reads: a donated one goes to the pool at once, for a result of its size to take. */
    private final boolean[] unusedArguments;
    private final LongAdder allocations = new LongAdder();
    /**
     * What a donated argument's later use says, naming the compiled method: found at the first donation only (a
     * stack walk, ~3 µs, ten times a small call), as every run's first frame outside Weft is that method's gate.
     */
    private volatile String donationReason;

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
        this.unusedArguments = unused(f.body());
        NativeLoops.prepare(builder.fusedLoops());
        NativeLoops.group(builder.deferredLoops());
    }

    private static boolean[] unused(Block body) {
        Set<Value> used = Collections.newSetFromMap(new IdentityHashMap<>());
        body.ops().forEach(op -> op.collectUses(used));
        boolean[] out = new boolean[body.arguments().size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = !used.contains(body.arguments().get(i));
        }
        return out;
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
        CpuFrame f = idleFrame.getAndSet(null);
        if (f == null) {
            f = new CpuFrame(slotCount, scratchFactories, classBytes, allocations);
        }
        Buffer[] donated = null;
        for (int i = 0; i < argumentTypes.length; i++) {
            Tensor t = args.get(i);
            boolean donation = TensorAccess.donated(t);
            Buffer b = donation && passedOnce(args, t)
                    ? new Buffer(argument(t, i), Buffer.Kind.DONATED, sizeClassOf(argumentTypes[i].byteSize()))
                    : new Buffer(argument(t, i), Buffer.Kind.READ_ONLY, -1);
            if (donation) {
                donated = donated == null ? new Buffer[argumentTypes.length] : donated;
                donated[i] = b;
            }
            f.define(main.argSlots()[i], b);
            if (b.kind == Buffer.Kind.DONATED && unusedArguments[i]) {
                f.release(main.argSlots()[i]);
            }
        }
        try {
            main.run(f);
        } catch (RuntimeException | Error e) {
            consumeDonations(args, donated, new Buffer[0]);
            throw e;
        }
        List<Tensor> results = new ArrayList<>(resultTypes.length);
        Buffer[] resultBuffers = new Buffer[resultTypes.length];
        for (int i = 0; i < resultTypes.length; i++) {
            Buffer b = f.slots[main.resultSlots()[i]];
            resultBuffers[i] = b;
            MemorySegment seg = b.segment;
            Tensor forwarded = b.kind == Buffer.Kind.READ_ONLY ? forwarded(args, b, i) : null;
            if (forwarded != null) {
                results.add(forwarded);
                continue;
            }
            if (b.kind == Buffer.Kind.READ_ONLY || returnedBefore(resultBuffers, i)) {
                seg = NativeMemory.allocateUninitialized(resultTypes[i].byteSize());
                MemorySegment.copy(b.segment, 0, seg, 0, resultTypes[i].byteSize());
            }
            b.escaped = true;
            results.add(TensorAccess.concrete(resultAvals[i], seg));
        }
        f.reset();
        idleFrame.set(f);
        consumeDonations(args, donated, resultBuffers);
        return results;
    }

    /** The pool class of buffers of {@code bytes} bytes, or {@code -1} when the program has none. */
    private int sizeClassOf(long bytes) {
        for (int c = 0; c < classBytes.length; c++) {
            if (classBytes[c] == bytes) {
                return c;
            }
        }
        return -1;
    }

    /** True if {@code t} is passed once only: a buffer that another argument also reads is not written over. */
    private static boolean passedOnce(List<Tensor> args, Tensor t) {
        int n = 0;
        for (Tensor a : args) {
            n += a == t ? 1 : 0;
        }
        return n == 1;
    }

    /**
     * The argument that result {@code i} returns unchanged, when it has the result's aval: that tensor itself rather
     * than a copy, as JAX forwards such an input (an optimizer state passed through is no fresh buffer a step).
     * Tensors are immutable, so sharing one is safe; a donated argument is not forwarded (its buffer is the result's
     * own). Null when the result is no such argument.
     */
    private Tensor forwarded(List<Tensor> args, Buffer b, int i) {
        for (Tensor t : args) {
            if (TensorAccess.data(t) == b.segment) {
                return TensorAccess.aval(t).equals(resultAvals[i]) ? t : null;
            }
        }
        return null;
    }

    /** True if result {@code i} shares its buffer with an earlier result (each result gets a buffer of its own). */
    private static boolean returnedBefore(Buffer[] results, int i) {
        for (int j = 0; j < i; j++) {
            if (results[j] == results[i]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Marks the donated arguments used up and frees the buffers that neither a result nor the frame's pool took
     * over, nor a custom call (a communication) holds (one passed twice was only read).
     */
    private void consumeDonations(List<Tensor> args, Buffer[] donated, Buffer[] results) {
        if (donated == null) {
            return;
        }
        String why = donationReason;
        if (why == null) {
            SourceLocation method = SourceLocation.capture();
            why = "it was donated to a compiled call of " + method.method() + " (" + method + ")";
            donationReason = why;
        }
        for (int i = 0; i < donated.length; i++) {
            if (donated[i] != null) {
                Buffer b = donated[i];
                boolean kept = Arrays.asList(results).contains(b) || b.escaped || b.refs == 0 && b.isPoolable();
                TensorAccess.consume(args.get(i), why, !kept);
            }
        }
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
