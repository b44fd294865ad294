package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Compiles a function body into {@link CompiledBlock}s: numbers every SSA value with a frame slot, assigns byte
 * sizes to pool classes, decodes each op once through the {@link OpCompiler} table, and turns
 * {@code weft.last_use} into the slots released after each op. A last use is honoured only for values defined in
 * the op's own block; a value from an enclosing block may still be needed by a later loop iteration.
 */
final class ProgramBuilder {
    private final Map<Value, Integer> slots = new IdentityHashMap<>();
    private final Map<Long, Integer> sizeClasses = new HashMap<>();
    private final List<Long> classBytes = new ArrayList<>();
    private final Map<String, OpCompiler> compilers;
    private final CustomCallRegistry customCalls;
    /** Values defined by the block being compiled, innermost last. */
    private final List<Set<Value>> scopes = new ArrayList<>();
    /** For each block being compiled, innermost last: the last of its ops that uses each value. */
    private final List<Map<Value, Op>> lastUsers = new ArrayList<>();
    private final List<Supplier<?>> scratch = new ArrayList<>();
    private final boolean straightLoops;
    /** The progress of each transfer a custom call of the block being compiled starts, by the call. */
    private final Map<Op, Runnable> transfers = new IdentityHashMap<>();
    /** The fused loops of the program, for {@link NativeLoops#prepare}. */
    private final List<FusedLoop> fusedLoops = new ArrayList<>();
    /** The small fused loops of the program left on the JVM, for {@link NativeLoops#group}. */
    private final List<FusedLoop> deferredLoops = new ArrayList<>();

    /** {@code straightLoops}: whether loops whose body it can run straight run so ({@link StraightLoop}). */
    ProgramBuilder(Map<String, OpCompiler> compilers, CustomCallRegistry customCalls, boolean straightLoops) {
        this.compilers = compilers;
        this.customCalls = customCalls;
        this.straightLoops = straightLoops;
    }

    /**
     * The loop of {@code spec} ({@link NativeLoops#loop}) for a call of {@code elements} elements; kept for
     * {@link #fusedLoops} when that many make it native from the start ({@link NativeLoops#PREPARE_MIN}), else
     * loaded now if its library is on disk and its calls are not tiny ({@link NativeLoops#CALL_MIN}), else kept for
     * {@link #deferredLoops}.
     */
    FusedLoop fusedLoop(FusedLoopSpec spec, long elements) {
        FusedLoop loop = NativeLoops.loop(spec);
        if (elements >= NativeLoops.PREPARE_MIN) {
            fusedLoops.add(loop);
        } else if (elements >= NativeLoops.CALL_MIN && !NativeLoops.loadIfOnDisk(loop)) {
            deferredLoops.add(loop);
        }
        return loop;
    }

    /**
     * {@link NativeLoops#nativeOnly} for a call of {@code elements} elements, kept for {@link #fusedLoops}; below
     * {@link NativeLoops#PREPARE_MIN}, where the JVM's kernels cost little once compiled, only a loop whose library
     * is on disk (its calls not tiny), else empty.
     */
    Optional<FusedLoop> nativeLoop(FusedLoopSpec spec, long elements) {
        if (elements < NativeLoops.CALL_MIN) {
            return Optional.empty();
        }
        Optional<FusedLoop> loop = NativeLoops.nativeOnly(spec);
        if (elements < NativeLoops.PREPARE_MIN) {
            return loop.filter(NativeLoops::loadIfOnDisk);
        }
        loop.ifPresent(fusedLoops::add);
        return loop;
    }

    /** The fused loops of the program compiled so far that should be native from the start. */
    List<FusedLoop> fusedLoops() {
        return fusedLoops;
    }

    /** The small fused loops of the program compiled so far that stay on the JVM until they run hot. */
    List<FusedLoop> deferredLoops() {
        return deferredLoops;
    }

    boolean straightLoops() {
        return straightLoops;
    }

    CustomCallRegistry customCalls() {
        return customCalls;
    }

    int slot(Value v) {
        return slots.computeIfAbsent(v, k -> slots.size());
    }

    int[] slots(List<Value> values) {
        return values.stream().mapToInt(this::slot).toArray();
    }

    int slotCount() {
        return slots.size();
    }

    /**
     * A new index into {@link CpuFrame#scratch}: the object there, made by {@code factory} when a run starts, is
     * reused by an instruction within the run (made up front so that the instruction has no first-use branch,
     * which C2 would compile as a trap that each new run hits).
     */
    int scratchSlot(Supplier<?> factory) {
        scratch.add(factory);
        return scratch.size() - 1;
    }

    Supplier<?>[] scratchFactories() {
        return scratch.toArray(Supplier<?>[]::new);
    }

    /** The pool class of buffers of {@code bytes} bytes. */
    int sizeClass(long bytes) {
        return sizeClasses.computeIfAbsent(bytes, b -> {
            classBytes.add(b);
            return classBytes.size() - 1;
        });
    }

    /** The pool class of a buffer holding {@code type}. */
    int sizeClass(TensorType type) {
        return sizeClass(type.byteSize());
    }

    long[] classBytes() {
        return classBytes.stream().mapToLong(Long::longValue).toArray();
    }

    CompiledBlock compile(Block block) {
        return compile(block, Set.of());
    }

    /** {@code block} without the ops in {@code skipped}, whose results the caller provides or never reads. */
    CompiledBlock compile(Block block, Set<Op> skipped) {
        Set<Value> local = Collections.newSetFromMap(new IdentityHashMap<>());
        local.addAll(block.arguments());
        scopes.add(local);
        lastUsers.add(lastUsers(block));
        try {
            int[] args = slots(block.arguments());
            List<Op> ops = block.ops();
            List<CpuStep> steps = new ArrayList<>();
            List<Value> defined = new ArrayList<>(block.arguments());
            // the transfers in flight, by their requests: each step until a request's user lets them progress
            Map<Value, Runnable> inFlight = new LinkedHashMap<>();
            for (Op op : ops.subList(0, ops.size() - 1)) {
                if (skipped.contains(op)) {
                    continue;
                }
                Instruction instruction = compileOp(op);
                Set<Value> used = Collections.newSetFromMap(new IdentityHashMap<>());
                op.collectUses(used);
                inFlight.keySet().removeAll(used);
                if (!inFlight.isEmpty()) {
                    instruction = progressing(instruction, inFlight.values().toArray(Runnable[]::new));
                }
                Runnable progress = transfers.remove(op);
                if (progress != null) {
                    op.results().stream().filter(v -> v.type() instanceof TensorType)
                            .forEach(v -> inFlight.put(v, progress));
                }
                steps.add(new CpuStep(op, instruction, dyingSlots(op)));
                local.addAll(op.results());
                defined.addAll(op.results());
            }
            return new CompiledBlock(args, steps.toArray(CpuStep[]::new), slots(block.results()), slots(defined));
        } finally {
            scopes.removeLast();
            lastUsers.removeLast();
        }
    }

    /** Records that the custom call {@code op} starts a transfer that {@code progress} lets progress. */
    void transferStarted(Op op, Runnable progress) {
        transfers.put(op, progress);
    }

    /** {@code instruction}, then each of {@code progress}: the transfers in flight move on between steps. */
    private static Instruction progressing(Instruction instruction, Runnable[] progress) {
        return f -> {
            instruction.execute(f);
            for (Runnable p : progress) {
                p.run();
            }
        };
    }

    /** The last op of {@code block} (terminator included) that uses each value, directly or in its regions. */
    private static Map<Value, Op> lastUsers(Block block) {
        Map<Value, Op> last = new IdentityHashMap<>();
        for (Op op : block.ops()) {
            recordUses(op, last);
        }
        return last;
    }

    private static void recordUses(Op user, Map<Value, Op> last) {
        IrWalk.forEachOp(user, op -> op.operands().forEach(v -> last.put(v, user)));
    }

    private Instruction compileOp(Op op) {
        OpCompiler c = compilers.get(op.name());
        if (c == null) {
            throw new WeftException(op.location(), "the CPU executor does not support op " + op.name());
        }
        try {
            return TimedInstruction.of(op, c.compile(op, this));
        } catch (IllegalArgumentException | IllegalStateException | ClassCastException e) {
            throw new WeftException(op.location(), op.name() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Indices of the operands whose value dies at {@code op}: marked in {@code weft.last_use}, defined in
     * {@code op}'s block, and used by no later op of it (a wrong mark is ignored rather than freeing a live buffer);
     * none for an op compiled outside a block.
     */
    List<Integer> dyingOperands(Op op) {
        if (!(op.attr(StableHlo.LAST_USE) instanceof Attr.I64Array a) || scopes.isEmpty()) {
            return List.of();
        }
        Set<Value> local = scopes.getLast();
        Map<Value, Op> last = lastUsers.getLast();
        Set<Value> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Integer> out = new ArrayList<>();
        for (long i : a.toArray()) {
            Value v = op.operand((int) i);
            if (local.contains(v) && last.get(v) == op && seen.add(v)) {
                out.add((int) i);
            }
        }
        return out;
    }

    private int[] dyingSlots(Op op) {
        return dyingOperands(op).stream().mapToInt(i -> slot(op.operand(i))).toArray();
    }

    /**
     * Slots of the dying operands whose buffers have the byte size of {@code op}'s result {@code result}: an
     * elementwise op may write its result over one of them.
     */
    int[] inPlaceCandidates(Op op, int result) {
        long bytes = op.results().get(result).tensorType().byteSize();
        Set<Integer> out = new LinkedHashSet<>();
        for (int i : dyingOperands(op)) {
            Value v = op.operand(i);
            if (v.type() instanceof TensorType t && t.byteSize() == bytes) {
                out.add(slot(v));
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** A buffer for a result: an exclusively owned dying operand among {@code candidates}, else a fresh one. */
    static Buffer output(CpuFrame f, int[] candidates, int sizeClass) {
        for (int s : candidates) {
            Buffer c = f.slots[s];
            if (c != null && c.isExclusiveTemp()) {
                return c;
            }
        }
        return f.allocate(sizeClass);
    }
}
