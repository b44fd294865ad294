package dev.weft.backends.cpu.exec;

import static dev.weft.backends.cpu.exec.GeneratedInstruction.classData;
import static dev.weft.backends.cpu.exec.GeneratedInstruction.desc;
import static java.lang.constant.ConstantDescs.CD_int;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;

import dev.weft.backends.cpu.kernels.ElementwiseKernel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Compiles a {@link StraightLoop} to a hidden class: an {@link Instruction} whose {@code execute} counts the loop
 * and calls one static method per iteration, the body in one of the registers' three states
 * ({@link StraightLoop#STATES}), every call on a constant (class data), which C2 inlines:
 * <pre>{@code
 * Run r = loop.enter(f);  long i = r.counter;  int last = -1;
 * if (i < BOUND) {
 *     step(r, 0); i += STEP; last = 0;
 *     while (i < BOUND) {
 *         step(r, 1); i += STEP; last = 1;
 *         if (i >= BOUND) break;
 *         step(r, 2); i += STEP; last = 2;
 *     }
 * }
 * r.counter = i;  loop.exit(f, r, last);                   // i wrapped to int for an i32 counter
 *
 * static void step(Run r, int state) {
 *     MemorySegment[] x = r.regs[state];  MemorySegment[][] in = r.fusionIn[state], out = r.fusionOut[state];
 *     CALL_0.accept(x[1], x[4]);                           // a communication
 *     LOOP_1.run(in[0], null, out[0], null, 0, N);         // FusedLoopRunner.run from its parallel size;
 *                                                          // its scalar loop for fewer elements than a vector
 * }
 * }</pre>
 * The body is a method of its own so that the JIT compiles it by its calls, from the first iterations, rather than
 * by the loop's back branches (its C2 version then waits for tens of thousands of iterations, or for the hundreds
 * of runs of {@code execute}); one method for every state, so that it is compiled once. No iteration writes a
 * register or an array: the states are laid out once per run. Each call's exception is reported as the general
 * path reports it ({@link StraightLoop#failure}).
 */
final class StraightLoopGenerator {
    private static final String NAME = "GeneratedStraightLoop";
    private static final ClassDesc CD_LOOP = desc(StraightLoop.class);
    private static final ClassDesc CD_RUN = desc(StraightLoop.Run.class);
    private static final ClassDesc CD_FRAME = desc(CpuFrame.class);
    private static final ClassDesc CD_SEGMENT = desc(MemorySegment.class);
    private static final ClassDesc CD_SEGMENTS = CD_SEGMENT.arrayType();
    private static final ClassDesc CD_FUSED = desc(FusedLoop.class);
    private static final ClassDesc CD_PAIR = desc(OperandResultCall.class);
    private static final ClassDesc CD_KERNEL = desc(ElementwiseKernel.class);
    private static final ClassDesc CD_RUNTIME = desc(RuntimeException.class);
    private static final String STEP_NAME = "step";
    private static final MethodTypeDesc STEP = MethodTypeDesc.of(CD_void, CD_RUN, CD_int);
    /** Locals of {@code execute}: this, the frame, the run, the counter (two slots), the state that ran last. */
    private static final int FRAME = 1;
    private static final int RUN = 2;
    private static final int COUNTER = 3;
    private static final int LAST = 5;
    /** Locals of the step: the run, the state, its registers, its fusions' input and result arrays, a scratch. */
    private static final int STEP_RUN = 0;
    private static final int STATE = 1;
    private static final int REGS = 2;
    private static final int IN = 3;
    private static final int OUT = 4;
    private static final int SCRATCH = 5;

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
        return GeneratedInstruction.define(NAME, data, code -> count(code, loop),
                List.of(new GeneratedInstruction.Helper(STEP_NAME, STEP, code -> new Step(code, loop).emit())),
                "a loop body");
    }

    /** The code of {@code execute}: the counting, state 0 once, then states 1 and 2 in turn. */
    private static void count(CodeBuilder code, StraightLoop loop) {
        ClassDesc self = GeneratedInstruction.self(NAME);
        Label done = code.newLabel();
        Label head = code.newLabel();
        code.ldc(classData(0, CD_LOOP)).aload(FRAME).invokevirtual(CD_LOOP, "enter", MethodTypeDesc.of(CD_RUN,
                CD_FRAME)).astore(RUN);
        code.aload(RUN).getfield(CD_RUN, "counter", CD_long).lstore(COUNTER);
        code.iconst_m1().istore(LAST);
        for (int s = 0; s < StraightLoop.STATES; s++) {
            if (s == 1) {
                code.labelBinding(head);
            }
            code.lload(COUNTER).ldc(loop.bound).lcmp().ifge(done);
            code.aload(RUN).loadConstant(s).invokestatic(self, STEP_NAME, STEP);
            code.lload(COUNTER).ldc(loop.increment).ladd();
            if (!loop.wide) {
                code.l2i().i2l();
            }
            code.lstore(COUNTER).loadConstant(s).istore(LAST);
        }
        code.goto_(head);
        code.labelBinding(done);
        code.aload(RUN).lload(COUNTER).putfield(CD_RUN, "counter", CD_long);
        code.ldc(classData(0, CD_LOOP)).aload(FRAME).aload(RUN).iload(LAST).invokevirtual(CD_LOOP, "exit",
                MethodTypeDesc.of(CD_void, CD_FRAME, CD_RUN, CD_int));
        code.return_();
    }

    /** The code of the step: each call of the body on the registers of the state it is given. */
    private static final class Step {
        private final CodeBuilder code;
        private final StraightLoop loop;

        Step(CodeBuilder code, StraightLoop loop) {
            this.code = code;
            this.loop = loop;
        }

        void emit() {
            code.aload(STEP_RUN).getfield(CD_RUN, "regs", CD_SEGMENTS.arrayType()).iload(STATE).aaload().astore(REGS);
            if (loop.fusions > 0) {
                code.aload(STEP_RUN).getfield(CD_RUN, "fusionIn", CD_SEGMENTS.arrayType().arrayType()).iload(STATE)
                        .aaload().astore(IN);
                code.aload(STEP_RUN).getfield(CD_RUN, "fusionOut", CD_SEGMENTS.arrayType().arrayType()).iload(STATE)
                        .aaload().astore(OUT);
            }
            int fusion = 0;
            for (int k = 0; k < loop.calls.size(); k++) {
                call(k, fusion);
                if (loop.calls.get(k) instanceof StraightLoop.Fusion) {
                    fusion++;
                }
            }
            code.return_();
        }

        /**
         * Call {@code k} ({@code fusion}: the fusion calls before it), its exceptions turned into the general
         * path's by {@link StraightLoop#failure}.
         */
        private void call(int k, int fusion) {
            Label start = code.newLabel();
            Label end = code.newLabel();
            Label after = code.newLabel();
            Label handler = code.newLabel();
            code.labelBinding(start);
            switch (loop.calls.get(k)) {
                case StraightLoop.Pair p -> {
                    code.ldc(classData(1 + k, CD_PAIR));
                    reg(p.in());
                    reg(p.out());
                    code.invokeinterface(CD_PAIR, "accept", MethodTypeDesc.of(CD_void, CD_SEGMENT, CD_SEGMENT));
                }
                case StraightLoop.Kernel e -> {
                    code.ldc(classData(1 + k, CD_KERNEL));
                    for (int i = 0; i < 3; i++) {
                        if (i < e.in().length) {
                            reg(e.in()[i]);
                        } else {
                            code.aconst_null();
                        }
                    }
                    reg(e.out());
                    code.ldc(e.n()).invokeinterface(CD_KERNEL, "apply", MethodTypeDesc.of(CD_void, CD_SEGMENT,
                            CD_SEGMENT, CD_SEGMENT, CD_SEGMENT, CD_long));
                }
                case StraightLoop.Fusion fu when fu.n() >= FusedLoopRunner.PARALLEL_MIN -> {
                    code.ldc(classData(1 + k, CD_FUSED));
                    code.aload(IN).ldc(fusion).aaload().aload(OUT).ldc(fusion).aaload();
                    code.ldc(fu.n()).invokestatic(desc(FusedLoopRunner.class), "run",
                            MethodTypeDesc.of(CD_void, CD_FUSED, CD_SEGMENTS, CD_SEGMENTS, CD_long));
                }
                case StraightLoop.Fusion fu -> {
                    // fewer elements than a warm-up slice (one f32 vector, two f64): the scalar loop itself, one
                    // call less per iteration
                    boolean scalar = fu.loop() instanceof VectorWarmUp.Paths && fu.n() < VectorWarmUp.SLICE;
                    ClassDesc owner = scalar ? FusedLoopGenerator.CD_PATHS : CD_FUSED;
                    code.ldc(classData(1 + k, owner));
                    code.aload(IN).ldc(fusion).aaload().aconst_null().aload(OUT).ldc(fusion).aaload().aconst_null();
                    code.lconst_0().ldc(fu.n()).invokeinterface(owner, scalar ? FusedLoopGenerator.SCALAR : "run",
                            FusedLoopGenerator.RUN);
                }
            }
            code.labelBinding(end);
            code.goto_(after);
            code.labelBinding(handler);
            code.astore(SCRATCH);
            code.ldc(classData(0, CD_LOOP)).ldc(k).aload(SCRATCH).checkcast(CD_RUNTIME).invokevirtual(CD_LOOP,
                    "failure", MethodTypeDesc.of(CD_RUNTIME, CD_int, CD_RUNTIME)).athrow();
            code.exceptionCatch(start, end, handler, CD_RUNTIME);
            code.labelBinding(after);
        }

        /** Pushes register {@code j}'s segment in this state. */
        private void reg(int j) {
            code.aload(REGS).ldc(j).aaload();
        }
    }
}
