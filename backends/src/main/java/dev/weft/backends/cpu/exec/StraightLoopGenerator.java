package dev.weft.backends.cpu.exec;

import static dev.weft.backends.cpu.exec.GeneratedInstruction.classData;
import static dev.weft.backends.cpu.exec.GeneratedInstruction.desc;
import static java.lang.constant.ConstantDescs.CD_Object;
import static java.lang.constant.ConstantDescs.CD_int;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;

import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Compiles a {@link StraightLoop} to a hidden class: an {@link Instruction} whose {@code execute} is the whole
 * loop in one method, so that the JIT compiles it on the stack (OSR) while it runs, with every register and the
 * counter in locals and every call on a constant (class data), which C2 inlines:
 * <pre>{@code
 * Run r = loop.enter(f);
 * MemorySegment x0 = r.regs[0], ...;  MemorySegment[] in0 = r.fusionIn[0], out0 = ...;
 * for (long i = r.counter; i < BOUND; i = i + STEP) {      // wrapped to int for an i32 counter
 *     CALL_0.accept(x1, x4);                                // a communication
 *     in0[0] = x4; out0[0] = x5; LOOP_1.run(in0, out0, 0, N);     // FusedLoopRunner.run from its parallel size
 *     old = x1; x1 = x5; x5 = old == initial1 ? alternate1 : old;   // carry and spare swap
 * }
 * r.regs[1] = x1; r.counter = i; loop.exit(f, r);
 * }</pre>
 * Each call's exception is reported as the general path reports it ({@link StraightLoop#failure}).
 */
final class StraightLoopGenerator {
    private static final ClassDesc CD_LOOP = desc(StraightLoop.class);
    private static final ClassDesc CD_RUN = desc(StraightLoop.Run.class);
    private static final ClassDesc CD_FRAME = desc(Frame.class);
    private static final ClassDesc CD_SEGMENT = desc(MemorySegment.class);
    private static final ClassDesc CD_SEGMENTS = CD_SEGMENT.arrayType();
    private static final ClassDesc CD_FUSED = desc(FusedLoop.class);
    private static final ClassDesc CD_PAIR = desc(BiConsumer.class);
    private static final ClassDesc CD_KERNEL = desc(ElementwiseKernel.class);
    private static final ClassDesc CD_RUNTIME = desc(RuntimeException.class);
    /** Locals: this, the frame, the run, the counter (two slots), a scratch, then the registers and arrays. */
    private static final int FRAME = 1;
    private static final int RUN = 2;
    private static final int COUNTER = 3;
    private static final int SCRATCH = 5;
    private static final int FIRST = 6;

    private StraightLoopGenerator() {
    }

    static Instruction generate(StraightLoop loop) {
        List<Object> data = new ArrayList<>();
        data.add(loop);
        for (StraightLoop.Call c : loop.calls) {
            data.add(switch (c) {
                case StraightLoop.Pair p -> p.call();
                case StraightLoop.Fusion fu -> fu.loop();
                case StraightLoop.Kernel k -> k.kernel();
            });
        }
        return GeneratedInstruction.define("GeneratedStraightLoop", data, code -> new Body(code, loop).emit(),
                "a loop body");
    }

    /** The code of {@code execute} for one loop. */
    private static final class Body {
        private final CodeBuilder code;
        private final StraightLoop loop;
        /**
         * Locals: of each register, of each fusion call's input and result arrays, and of each varying carry's
         * initial and alternate segments.
         */
        private final int[] reg;
        private final int[] fusionIn;
        private final int[] fusionOut;
        private final int[] initial;
        private final int[] alternate;

        Body(CodeBuilder code, StraightLoop loop) {
            this.code = code;
            this.loop = loop;
            int next = FIRST;
            reg = new int[loop.registers()];
            for (int j = 0; j < reg.length; j++) {
                reg[j] = next++;
            }
            fusionIn = new int[loop.calls.size()];
            fusionOut = new int[loop.calls.size()];
            for (int k = 0; k < fusionIn.length; k++) {
                if (loop.calls.get(k) instanceof StraightLoop.Fusion) {
                    fusionIn[k] = next++;
                    fusionOut[k] = next++;
                }
            }
            initial = new int[loop.varying.length];
            alternate = new int[loop.varying.length];
            for (int i = 0; i < initial.length; i++) {
                initial[i] = next++;
                alternate[i] = next++;
            }
        }

        void emit() {
            loadLoop().aload(FRAME).invokevirtual(CD_LOOP, "enter", MethodTypeDesc.of(CD_RUN, CD_FRAME)).astore(RUN);
            for (int j = 0; j < reg.length; j++) {
                field("regs", CD_SEGMENTS).ldc(j).aaload().astore(reg[j]);
            }
            int f = 0;
            for (int k = 0; k < fusionIn.length; k++) {
                if (loop.calls.get(k) instanceof StraightLoop.Fusion) {
                    field("fusionIn", CD_SEGMENTS.arrayType()).ldc(f).aaload().astore(fusionIn[k]);
                    field("fusionOut", CD_SEGMENTS.arrayType()).ldc(f).aaload().astore(fusionOut[k]);
                    f++;
                }
            }
            for (int i = 0; i < initial.length; i++) {
                field("initial", CD_SEGMENTS).ldc(i).aaload().astore(initial[i]);
                field("alternate", CD_SEGMENTS).ldc(i).aaload().astore(alternate[i]);
            }
            code.aload(RUN).getfield(CD_RUN, "counter", CD_long).lstore(COUNTER);
            Label head = code.newLabel();
            Label done = code.newLabel();
            code.labelBinding(head);
            code.lload(COUNTER).ldc(loop.bound).lcmp().ifge(done);
            for (int k = 0; k < loop.calls.size(); k++) {
                call(k);
            }
            for (int i = 0; i < loop.varying.length; i++) {
                swap(i);
            }
            code.lload(COUNTER).ldc(loop.increment).ladd();
            if (!loop.wide) {
                code.l2i().i2l();
            }
            code.lstore(COUNTER).goto_(head);
            code.labelBinding(done);
            for (int i = 0; i < loop.varying.length; i++) {
                field("regs", CD_SEGMENTS).ldc(loop.carryReg[i]).aload(reg[loop.carryReg[i]]).aastore();
            }
            code.aload(RUN).lload(COUNTER).putfield(CD_RUN, "counter", CD_long);
            loadLoop().aload(FRAME).aload(RUN).invokevirtual(CD_LOOP, "exit",
                    MethodTypeDesc.of(CD_void, CD_FRAME, CD_RUN));
            code.return_();
        }

        /** Call {@code k}, its exceptions turned into the general path's by {@link StraightLoop#failure}. */
        private void call(int k) {
            Label start = code.newLabel();
            Label end = code.newLabel();
            Label after = code.newLabel();
            Label handler = code.newLabel();
            code.labelBinding(start);
            switch (loop.calls.get(k)) {
                case StraightLoop.Pair p -> code.ldc(classData(1 + k, CD_PAIR)).aload(reg[p.in()]).aload(reg[p.out()])
                        .invokeinterface(CD_PAIR, "accept", MethodTypeDesc.of(CD_void, CD_Object, CD_Object));
                case StraightLoop.Kernel e -> {
                    code.ldc(classData(1 + k, CD_KERNEL));
                    for (int i = 0; i < 3; i++) {
                        if (i < e.in().length) {
                            code.aload(reg[e.in()[i]]);
                        } else {
                            code.aconst_null();
                        }
                    }
                    code.aload(reg[e.out()]).ldc(e.n()).invokeinterface(CD_KERNEL, "apply", MethodTypeDesc.of(CD_void,
                            CD_SEGMENT, CD_SEGMENT, CD_SEGMENT, CD_SEGMENT, CD_long));
                }
                case StraightLoop.Fusion fu -> {
                    for (int i = 0; i < fu.in().length; i++) {
                        if (varies(fu.in()[i])) {
                            code.aload(fusionIn[k]).ldc(i).aload(reg[fu.in()[i]]).aastore();
                        }
                    }
                    for (int i = 0; i < fu.out().length; i++) {
                        if (varies(fu.out()[i])) {
                            code.aload(fusionOut[k]).ldc(i).aload(reg[fu.out()[i]]).aastore();
                        }
                    }
                    code.ldc(classData(1 + k, CD_FUSED)).aload(fusionIn[k]).aload(fusionOut[k]);
                    if (fu.n() < FusedLoopRunner.PARALLEL_MIN) {
                        code.lconst_0().ldc(fu.n()).invokeinterface(CD_FUSED, "run",
                                MethodTypeDesc.of(CD_void, CD_SEGMENTS, CD_SEGMENTS, CD_long, CD_long));
                    } else {
                        code.ldc(fu.n()).invokestatic(desc(FusedLoopRunner.class), "run",
                                MethodTypeDesc.of(CD_void, CD_FUSED, CD_SEGMENTS, CD_SEGMENTS, CD_long));
                    }
                }
            }
            code.labelBinding(end);
            code.goto_(after);
            code.labelBinding(handler);
            code.astore(SCRATCH);
            loadLoop().ldc(k).aload(SCRATCH).checkcast(CD_RUNTIME).invokevirtual(CD_LOOP, "failure",
                    MethodTypeDesc.of(CD_RUNTIME, CD_int, CD_RUNTIME)).athrow();
            code.exceptionCatch(start, end, handler, CD_RUNTIME);
            code.labelBinding(after);
        }

        /**
         * Whether register {@code j} holds another segment from one iteration to the next (a carry or its next
         * value).
         */
        private boolean varies(int j) {
            return loop.kind[j] == StraightLoop.Kind.CARRY || loop.kind[j] == StraightLoop.Kind.NEXT;
        }

        /** Varying carry {@code i}'s read and spare registers swap; the spare is never the initial carry. */
        private void swap(int i) {
            int cur = reg[loop.carryReg[i]];
            int spare = reg[loop.nextReg[i]];
            Label notInitial = code.newLabel();
            Label swapped = code.newLabel();
            code.aload(cur).astore(SCRATCH);
            code.aload(spare).astore(cur);
            code.aload(SCRATCH).aload(initial[i]).if_acmpne(notInitial);
            code.aload(alternate[i]).astore(spare).goto_(swapped);
            code.labelBinding(notInitial);
            code.aload(SCRATCH).astore(spare);
            code.labelBinding(swapped);
        }

        private CodeBuilder loadLoop() {
            return code.ldc(classData(0, CD_LOOP));
        }

        private CodeBuilder field(String name, ClassDesc type) {
            return code.aload(RUN).getfield(CD_RUN, name, type);
        }
    }
}
