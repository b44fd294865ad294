package dev.weft.backends.cpu.exec;

import static dev.weft.backends.cpu.exec.GeneratedInstruction.classData;
import static dev.weft.backends.cpu.exec.GeneratedInstruction.EXECUTE;
import static dev.weft.backends.cpu.exec.GeneratedInstruction.desc;
import static java.lang.constant.ConstantDescs.CD_boolean;
import static java.lang.constant.ConstantDescs.CD_void;

import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.util.ArrayList;
import java.util.List;

/**
 * Compiles a {@code stablehlo.while} to a hidden class of its own: an {@link Instruction} whose {@code execute} is
 * the iteration loop with one call per body step, each on a constant {@link CpuStep} (class data). C2 then knows the
 * exact class of every step's instruction and calls it directly, or inlines it; the executor's shared
 * {@code for (CpuStep s : steps)} loop is one call site for every op of every program, which it can only dispatch
 * through the interface table. Everything else a loop does stays in Java ({@link ControlFlowCompiler.WhileLoop}):
 * <pre>{@code
 * State s = loop.enter(f);
 * while (loop.again(s)) {
 *     loop.beforeBody(s);
 *     STEP_0.execute(f); STEP_1.execute(f); ...
 *     loop.afterBody(s);
 * }
 * loop.exit(s);
 * }</pre>
 * A body of more than {@value #MAX_UNROLLED} steps runs through {@link CompiledBlock#run} instead, which keeps the
 * method well under the size C2 compiles.
 */
final class LoopGenerator {
    static final int MAX_UNROLLED = 512;

    private static final ClassDesc CD_LOOP = desc(ControlFlowCompiler.WhileLoop.class);
    private static final ClassDesc CD_STATE = desc(ControlFlowCompiler.State.class);
    private static final ClassDesc CD_FRAME = desc(CpuFrame.class);
    private static final ClassDesc CD_STEP = desc(CpuStep.class);
    private static final ClassDesc CD_BLOCK = desc(CompiledBlock.class);
    private static final MethodTypeDesc STATE_V = MethodTypeDesc.of(CD_void, CD_STATE);
    /** Locals of {@code execute}: this, the frame, the loop state. */
    private static final int FRAME = 1;
    private static final int STATE = 2;

    private LoopGenerator() {
    }

    static Instruction generate(ControlFlowCompiler.WhileLoop loop) {
        CpuStep[] steps = loop.bodyBlock().steps();
        boolean unrolled = steps.length <= MAX_UNROLLED;
        List<Object> data = new ArrayList<>();
        data.add(loop);
        data.add(loop.bodyBlock());
        if (unrolled) {
            data.addAll(List.of(steps));
        }
        return GeneratedInstruction.define("GeneratedWhile", data, code -> execute(code, unrolled ? steps.length : -1),
                "a while loop");
    }

    /** {@code execute}, calling {@code steps} constant steps, or the body block when negative. */
    private static void execute(CodeBuilder code, int steps) {
        Label head = code.newLabel();
        Label done = code.newLabel();
        loop(code).aload(FRAME).invokevirtual(CD_LOOP, "enter", MethodTypeDesc.of(CD_STATE, CD_FRAME))
                .astore(STATE);
        code.labelBinding(head);
        loop(code).aload(STATE).invokevirtual(CD_LOOP, "again", MethodTypeDesc.of(CD_boolean, CD_STATE))
                .ifeq(done);
        loop(code).aload(STATE).invokevirtual(CD_LOOP, "beforeBody", STATE_V);
        if (steps < 0) {
            code.ldc(classData(1, CD_BLOCK)).aload(FRAME).invokevirtual(CD_BLOCK, "run", EXECUTE);
        }
        for (int k = 0; k < steps; k++) {
            code.ldc(classData(2 + k, CD_STEP)).aload(FRAME).invokevirtual(CD_STEP, "execute", EXECUTE);
        }
        loop(code).aload(STATE).invokevirtual(CD_LOOP, "afterBody", STATE_V);
        code.goto_(head);
        code.labelBinding(done);
        loop(code).aload(STATE).invokevirtual(CD_LOOP, "exit", STATE_V);
        code.return_();
    }

    private static CodeBuilder loop(CodeBuilder code) {
        return code.ldc(classData(0, CD_LOOP));
    }
}
