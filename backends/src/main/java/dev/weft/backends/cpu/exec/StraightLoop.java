package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.ElementwiseKernel;
import dev.weft.backends.timeline.Timeline;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A {@code Weft.fori} loop whose body runs as straight-line code ({@link StraightLoopGenerator}): every buffer
 * the body writes taken from the frame's pool once per run of the loop and reused by every iteration, each op a
 * direct call on constant arguments (a bound communication, a fused loop), and nothing checked, allocated,
 * written or reference-counted per iteration but the ops' results.
 *
 * <p>Each value of the body is a register: a carry, a constant, an intermediate (one buffer for the loop) or the
 * next value of a carry, written into one of the carry's two buffers, which take turns from the second iteration
 * on (the caller's initial carry is never written): the {@link #STATES} states of the registers. The generator
 * handles a body of a counted loop that never reads its counter but to step it (counted in Java, see
 * {@link dev.weft.lowering.ir.Attr.CountedLoop}) made only of
 * <ul>
 * <li>constants,</li>
 * <li>custom calls on one tensor (and tokens) to one tensor (and tokens) that run as a direct call
 * ({@link CustomCallHandler#operandResultCall}: the collectives and {@code sendrecv}),</li>
 * <li>fusions that run as one generated loop over whole buffers ({@link FusedLoopSpec}, no views),</li>
 * <li>elementwise ops outside fusions (an integer division by a value the body computes, say),</li>
 * </ul>
 * whose carries come back unchanged, as an op's result (each result one carry's), or are tokens. Any other body
 * (other ops, point-to-point or nonblocking communication, a carry returning another carry or a constant, more
 * than {@value #MAX_OPS} ops, a loop that is not counted) runs as before ({@link LoopGenerator}), as does every
 * loop while a {@link Timeline} is recorded (whose kernel events the general path writes) and every loop with
 * communication under {@code WEFT_DEBUG=1} (which logs each call through the general path). Results are the same
 * on both paths: the ops are the same calls on the same values, only where their results live differs.
 */
final class StraightLoop {
    /** Bodies of more ops than this run on the general path, so that the generated method stays small for C2. */
    static final int MAX_OPS = 64;
    /**
     * The states of the registers: a varying carry is read from the caller's initial buffer and written to its
     * {@code NEXT} buffer in the first iteration (state 0), then read from {@code NEXT} and written to its alternate
     * (state 1), then the other way round (state 2), states 1 and 2 taking turns. Every varying carry moves with
     * the same iteration, so one state covers them all, and no iteration writes a register.
     */
    static final int STATES = 3;
    private static final MemorySegment[] NO_SEGMENTS = {};

    /** What a register holds. */
    enum Kind {
        /** A varying carry, as the iteration reads it. */
        CARRY,
        /** A carry the body returns unchanged, bound once. */
        PINNED,
        CONSTANT,
        /** An op result that is no carry's next value: one buffer for the whole loop. */
        TEMP,
        /** A varying carry's next value, written into the carry's spare buffer. */
        NEXT
    }

    /** One op of the body, on registers. */
    sealed interface Call permits Pair, Fusion, Kernel {
        Op op();
    }

    /**
     * A custom call run as {@code call.accept(in, out)}; {@code inPlace} if it may be given one buffer as both
     * ({@link CustomCallHandler#writesOverOperand}).
     */
    record Pair(Op op, OperandResultCall call, int in, int out, boolean inPlace) implements Call {
    }

    /**
     * An elementwise op outside any fusion, run as {@code kernel.apply(in0, in1, in2, out, n)} (null past its
     * arity).
     */
    record Kernel(Op op, ElementwiseKernel kernel, int[] in, int out, long n) implements Call {
    }

    /**
     * A fusion run as {@code loop.run(inputs, results, 0, n)}, or {@code FusedLoopRunner.run(loop, inputs, results,
     * n)} from the size it splits over threads: {@code in} are the registers of its operands, followed in its input
     * array by the region's own {@code constants}.
     */
    record Fusion(Op op, FusedLoop loop, int[] in, MemorySegment[] constants, int[] out, long n) implements Call {
    }

    final int[] inSlots;
    final int[] outSlots;
    /** Per register: its kind, the carry it belongs to (CARRY, PINNED, NEXT) and its size class (TEMP, NEXT). */
    final Kind[] kind;
    final int[] carryOf;
    final int[] sizeClass;
    /**
     * Per register: the varying carry register whose buffer it takes from the second iteration on, or -1. An
     * allreduce whose operand is a carry that nothing else reads writes its result over it there (the carry's two
     * buffers are the loop's by then): MPI then reduces in place instead of copying 8 MiB into a third buffer
     * first, and the loop touches two buffers, as C's does.
     */
    final int[] aliasOf;
    /**
     * Per operand of the loop: whether the loop is its last use. The first iteration may then write over a carry's
     * initial buffer too, when the loop holds the only other reference to it (a donated argument, a temporary).
     */
    final boolean[] dies;
    final MemorySegment[] constant;
    final List<Call> calls;
    /** The carries that change: their registers as read ({@code carryReg}) and as written ({@code nextReg}). */
    final int[] varying;
    final int[] carryReg;
    final int[] nextReg;
    final int counter;
    final boolean wide;
    final long bound;
    final long increment;
    private final int counterClass;
    /** How many of {@link #calls} are fusions (each has its arrays in a run). */
    final int fusions;

    private StraightLoop(int[] inSlots, int[] outSlots, List<Kind> kind, List<Integer> carryOf,
                         List<Integer> sizeClass, List<MemorySegment> constant, List<Call> calls, int[] varying,
                         int[] carryReg, int[] nextReg, int counter, boolean wide, long bound, long increment,
                         int counterClass, boolean[] dies) {
        this.inSlots = inSlots;
        this.outSlots = outSlots;
        this.kind = kind.toArray(Kind[]::new);
        this.carryOf = carryOf.stream().mapToInt(Integer::intValue).toArray();
        this.sizeClass = sizeClass.stream().mapToInt(Integer::intValue).toArray();
        this.aliasOf = aliases(this.kind, calls);
        this.dies = dies;
        this.constant = constant.toArray(MemorySegment[]::new);
        this.calls = List.copyOf(calls);
        this.varying = varying;
        this.carryReg = carryReg;
        this.nextReg = nextReg;
        this.counter = counter;
        this.wide = wide;
        this.bound = bound;
        this.increment = increment;
        this.counterClass = counterClass;
        this.fusions = (int) calls.stream().filter(c -> c instanceof Fusion).count();
    }

    /** {@link #aliasOf} for {@code calls} on registers of {@code kind}. */
    private static int[] aliases(Kind[] kind, List<Call> calls) {
        int[] reads = new int[kind.length];
        for (Call c : calls) {
            switch (c) {
                case Pair p -> reads[p.in()]++;
                case Fusion f -> Arrays.stream(f.in()).forEach(r -> reads[r]++);
                case Kernel k -> Arrays.stream(k.in()).forEach(r -> reads[r]++);
            }
        }
        int[] alias = new int[kind.length];
        Arrays.fill(alias, -1);
        for (Call c : calls) {
            if (c instanceof Pair p && p.inPlace() && kind[p.in()] == Kind.CARRY && reads[p.in()] == 1
                    && kind[p.out()] == Kind.TEMP) {
                alias[p.out()] = p.in();
            }
        }
        return alias;
    }

    int registers() {
        return kind.length;
    }

    /**
     * The straight-line form of {@code op}, a while loop counting carry {@code counter} from its initial value
     * to {@code bound} by {@code increment} (the body's {@code skipped} ops step it), or empty when its
     * body is not one the generator handles (see the class comment).
     */
    static Optional<StraightLoop> of(Op op, ProgramBuilder b, int counter, boolean wide, long bound, long increment,
                                     Set<Op> skipped) {
        if (Timeline.ENABLED) {
            return Optional.empty();
        }
        try {
            return analyse(op, b, counter, wide, bound, increment, skipped);
        } catch (WeftException | IllegalArgumentException | IllegalStateException | ClassCastException e) {
            return Optional.empty(); // the general path reports it, at the op's line
        }
    }

    private static Optional<StraightLoop> analyse(Op op, ProgramBuilder b, int counter, boolean wide, long bound,
                                                  long increment, Set<Op> skipped) {
        Block body = op.regions().get(1);
        List<Op> ops = body.ops().subList(0, body.ops().size() - 1);
        if (ops.size() - skipped.size() > MAX_OPS) {
            return Optional.empty();
        }
        List<Value> args = body.arguments();
        List<Value> results = body.results();
        Map<Value, Integer> reg = new IdentityHashMap<>();
        List<Kind> kind = new ArrayList<>();
        List<Integer> carryOf = new ArrayList<>();
        List<Integer> sizeClass = new ArrayList<>();
        List<MemorySegment> constant = new ArrayList<>();
        // the next value of each varying carry, by the op result that is it
        Map<Value, Integer> nextOf = new IdentityHashMap<>();
        List<Integer> varying = new ArrayList<>();
        for (int k = 0; k < args.size(); k++) {
            Value arg = args.get(k);
            Value result = results.get(k);
            if (k == counter || arg.type() instanceof TokenType) {
                continue;
            }
            if (result == arg) {
                reg.put(arg, kind.size());
                add(kind, carryOf, sizeClass, constant, Kind.PINNED, k, -1, null);
            } else if (!args.contains(result) && !nextOf.containsKey(result) && producedBy(ops, skipped, result)) {
                reg.put(arg, kind.size());
                add(kind, carryOf, sizeClass, constant, Kind.CARRY, k, -1, null);
                nextOf.put(result, k);
                varying.add(k);
            } else {
                return Optional.empty();
            }
        }
        List<Call> calls = new ArrayList<>();
        for (Op o : ops) {
            if (skipped.contains(o)) {
                continue;
            }
            if (o.name().equals(StableHlo.CONSTANT) && o.attr("value") instanceof Attr.Dense d) {
                reg.put(o.result(), kind.size());
                add(kind, carryOf, sizeClass, constant, Kind.CONSTANT, -1, -1, d.data());
                continue;
            }
            List<Integer> in = new ArrayList<>();
            for (Value v : o.operands()) {
                if (v.type() instanceof TensorType) {
                    Integer r = reg.get(v);
                    if (r == null) {
                        return Optional.empty();
                    }
                    in.add(r);
                }
            }
            List<Integer> out = new ArrayList<>();
            for (Value v : o.results()) {
                if (v.type() instanceof TensorType t) {
                    Integer k = nextOf.get(v);
                    reg.put(v, kind.size());
                    out.add(kind.size());
                    add(kind, carryOf, sizeClass, constant, k == null ? Kind.TEMP : Kind.NEXT, k == null ? -1 : k,
                            b.sizeClass(t), null);
                }
            }
            Optional<Call> call = call(o, b, in, out);
            if (call.isEmpty()) {
                return Optional.empty();
            }
            calls.add(call.get());
        }
        int[] v = varying.stream().mapToInt(Integer::intValue).toArray();
        int[] carryReg = new int[v.length];
        int[] nextReg = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            carryReg[i] = reg.get(args.get(v[i]));
            nextReg[i] = reg.get(results.get(v[i]));
        }
        int counterClass = b.sizeClass(op.results().get(counter).tensorType());
        boolean[] dies = new boolean[args.size()];
        b.dyingOperands(op).forEach(i -> dies[i] = true);
        return Optional.of(new StraightLoop(b.slots(op.operands()), b.slots(op.results()), kind, carryOf, sizeClass,
                constant, calls, v, carryReg, nextReg, counter, wide, bound, increment, counterClass, dies));
    }

    private static void add(List<Kind> kind, List<Integer> carryOf, List<Integer> sizeClass,
                            List<MemorySegment> constant, Kind k, int carry, int cls, MemorySegment data) {
        kind.add(k);
        carryOf.add(carry);
        sizeClass.add(cls);
        constant.add(data);
    }

    private static boolean producedBy(List<Op> ops, Set<Op> skipped, Value v) {
        return ops.stream().anyMatch(o -> !skipped.contains(o) && !o.name().equals(StableHlo.CONSTANT)
                && o.results().contains(v));
    }

    /** {@code o} as a call on registers {@code in} to registers {@code out}, if it is one the generator runs. */
    private static Optional<Call> call(Op o, ProgramBuilder b, List<Integer> in, List<Integer> out) {
        if (o.name().equals(StableHlo.CUSTOM_CALL) && in.size() == 1 && out.size() == 1) {
            CustomCallHandler h = CustomCallInstruction.pairHandler(o, b);
            OperandResultCall pair = h == null ? null : h.operandResultCall(o);
            return pair == null ? Optional.empty() : Optional.of(new Pair(o, pair, in.getFirst(), out.getFirst(),
                    h.writesOverOperand(o)));
        }
        if (o.elementwise() != null && out.size() == 1 && in.size() <= 3) {
            return Optional.of(new Kernel(o, OpCompilers.kernel(o), ints(in), out.getFirst(),
                    o.result().tensorType().shape().size()));
        }
        if (o.name().equals(StableHlo.FUSION) && !out.isEmpty()) {
            List<Attr.Dense> constants = new ArrayList<>();
            long n = o.results().getFirst().tensorType().shape().size();
            return FusedLoopSpec.of(o, n, constants)
                    .filter(spec -> FusionViews.of(o, constants.stream()
                            .mapToLong(d -> d.type().dtype().byteSize()).toArray()) == null)
                    .map(spec -> new Fusion(o, b.fusedLoop(spec, n), ints(in),
                            constants.stream().map(Attr.Dense::data).toArray(MemorySegment[]::new), ints(out), n));
        }
        return Optional.empty();
    }

    private static int[] ints(List<Integer> list) {
        return list.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * One run of the loop: per state ({@link #STATES}), the segment of each register and the input and result
     * arrays of each fusion call, and the buffers behind them.
     */
    static final class Run {
        final MemorySegment[][] regs;
        final MemorySegment[][][] fusionIn;
        final MemorySegment[][][] fusionOut;
        final Buffer[] carries;
        final Buffer[] buffers;
        /** Per varying carry: the second of the two buffers its values take turns in. */
        final Buffer[] alternates;
        long counter;

        private Run(MemorySegment[][] regs, MemorySegment[][][] fusionIn, MemorySegment[][][] fusionOut,
                    Buffer[] carries, Buffer[] buffers, Buffer[] alternates) {
            this.regs = regs;
            this.fusionIn = fusionIn;
            this.fusionOut = fusionOut;
            this.carries = carries;
            this.buffers = buffers;
            this.alternates = alternates;
        }
    }

    /**
     * Takes a reference to each initial carry and the buffers of the loop from the frame's pool, and lays out the
     * registers of each state. Runs once per run of the loop, often interpreted in a program's first calls: no
     * streams or iterators here. Every array is filled while it is a local of its own allocation: C2 compiles a
     * store into an array of an interface type (here {@link MemorySegment}) read from a field as a guess on the
     * array's class that always fails once, each such store costing a deoptimisation and a recompilation.
     */
    Run enter(CpuFrame f) {
        Buffer[] carries = new Buffer[inSlots.length];
        for (int i = 0; i < carries.length; i++) {
            carries[i] = f.slots[inSlots[i]];
            carries[i].refs++;
        }
        Buffer[] buffers = new Buffer[kind.length];
        MemorySegment[] first = new MemorySegment[kind.length];
        for (int j = 0; j < kind.length; j++) {
            first[j] = switch (kind[j]) {
                case CARRY, PINNED -> carries[carryOf[j]].segment;
                case CONSTANT -> constant[j];
                case TEMP -> aliasOf[j] >= 0 && writable(carries[carryOf[aliasOf[j]]], carryOf[aliasOf[j]])
                        ? carries[carryOf[aliasOf[j]]].segment : take(f, buffers, j, sizeClass[j]);
                case NEXT -> take(f, buffers, j, sizeClass[j]);
            };
        }
        MemorySegment[] odd = new MemorySegment[kind.length];
        MemorySegment[] even = new MemorySegment[kind.length];
        System.arraycopy(first, 0, odd, 0, first.length);
        System.arraycopy(first, 0, even, 0, first.length);
        Buffer[] alternates = new Buffer[varying.length];
        for (int i = 0; i < varying.length; i++) {
            Buffer alt = f.allocate(sizeClass[nextReg[i]]);
            alt.refs = 1;
            alternates[i] = alt;
            MemorySegment next = first[nextReg[i]];
            odd[carryReg[i]] = next;
            odd[nextReg[i]] = alt.segment;
            even[carryReg[i]] = alt.segment;
            even[nextReg[i]] = next;
        }
        for (int j = 0; j < kind.length; j++) {
            if (aliasOf[j] >= 0) {
                odd[j] = odd[aliasOf[j]];
                even[j] = even[aliasOf[j]];
            }
        }
        MemorySegment[][] regs = new MemorySegment[STATES][];
        regs[0] = first;
        regs[1] = odd;
        regs[2] = even;
        MemorySegment[][][] fusionIn = new MemorySegment[STATES][][];
        MemorySegment[][][] fusionOut = new MemorySegment[STATES][][];
        for (int s = 0; s < STATES; s++) {
            MemorySegment[][] ins = new MemorySegment[fusions][];
            MemorySegment[][] outs = new MemorySegment[fusions][];
            int k = 0;
            for (int j = 0; j < calls.size(); j++) {
                if (calls.get(j) instanceof Fusion fu) {
                    ins[k] = fusionArray(regs[s], fu.in(), fu.constants());
                    outs[k] = fusionArray(regs[s], fu.out(), NO_SEGMENTS);
                    k++;
                }
            }
            fusionIn[s] = ins;
            fusionOut[s] = outs;
        }
        Run r = new Run(regs, fusionIn, fusionOut, carries, buffers, alternates);
        r.counter = wide ? carries[counter].segment.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                : carries[counter].segment.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
        return r;
    }

    /**
     * Whether the first iteration may write over {@code b}, the initial value of carry {@code k}: the loop is its
     * last use, it is the run's own (not a read-only argument) and nothing but its slot and the loop holds it.
     */
    private boolean writable(Buffer b, int k) {
        return dies[k] && (b.kind == Buffer.Kind.TEMP || b.kind == Buffer.Kind.DONATED) && !b.escaped && b.refs == 2;
    }

    private static MemorySegment take(CpuFrame f, Buffer[] buffers, int j, int sizeClass) {
        Buffer b = f.allocate(sizeClass);
        b.refs = 1;
        buffers[j] = b;
        return b.segment;
    }

    /** The segments of registers {@code regs} in {@code state}, followed by {@code constants}. */
    private static MemorySegment[] fusionArray(MemorySegment[] state, int[] regs, MemorySegment[] constants) {
        MemorySegment[] a = new MemorySegment[regs.length + constants.length];
        for (int i = 0; i < regs.length; i++) {
            a[i] = state[regs[i]];
        }
        System.arraycopy(constants, 0, a, regs.length, constants.length);
        return a;
    }

    /**
     * Defines the loop's results: each varying carry's last value, in its {@code NEXT} buffer after state 0 or 2
     * ran last and in its alternate after state 1 ({@code last}, -1 when no iteration ran), the counter's final
     * value (a new buffer); drops the initial carries' references and the loop's other buffers.
     */
    void exit(CpuFrame f, Run r, int last) {
        Buffer[] result = r.carries.clone();
        for (int i = 0; i < varying.length; i++) {
            Buffer next = r.buffers[nextReg[i]];
            Buffer alt = r.alternates[i];
            if (last >= 0) {
                result[varying[i]] = last == 1 ? alt : next;
                f.drop(r.carries[varying[i]]);
                f.drop(last == 1 ? next : alt);
            } else {
                f.drop(next);
                f.drop(alt);
            }
            r.buffers[nextReg[i]] = null;
        }
        for (Buffer b : r.buffers) {
            if (b != null) {
                f.drop(b);
            }
        }
        Buffer count = f.allocate(counterClass);
        count.refs = 1;
        if (wide) {
            count.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, r.counter);
        } else {
            count.segment.set(ValueLayout.JAVA_INT_UNALIGNED, 0, (int) r.counter);
        }
        f.drop(r.carries[counter]);
        result[counter] = count;
        for (int i = 0; i < outSlots.length; i++) {
            f.slots[outSlots[i]] = result[i];
        }
    }

    /** The exception call {@code k} threw, as the general path reports it ({@link CpuStep}, {@link FusionInstruction}). */
    RuntimeException failure(int k, RuntimeException e) {
        if (e instanceof WeftException w) {
            return w;
        }
        Op op = calls.get(k).op();
        RuntimeException cause = e instanceof ArithmeticException && calls.get(k) instanceof Fusion
                ? new ArithmeticException(Elementwise.DIVISION_BY_ZERO) : e;
        return new WeftException(op.location(), op.name() + ": " + cause.getMessage(), cause);
    }
}
