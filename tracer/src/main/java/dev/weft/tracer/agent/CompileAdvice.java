package dev.weft.tracer.agent;

import dev.weft.tracer.CompileGate;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Inlined into {@code @Compile} methods that return a value: the gate either lets the body run (this thread is
 * tracing) or returns the executable's result, which replaces the skipped body's return value. The origin is
 * passed as constants (class literal and signature string) so that a cached call does no reflection.
 */
final class CompileAdvice {
    private CompileAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    static Object enter(@Advice.Origin Class<?> type, @Advice.Origin("#m#d") String signature,
                        @Advice.This(optional = true) Object receiver, @Advice.AllArguments Object[] args) {
        return CompileGate.enter(type, signature, receiver, args);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter Object result,
                     @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned) {
        if (result != null) {
            returned = result;
        }
    }
}
