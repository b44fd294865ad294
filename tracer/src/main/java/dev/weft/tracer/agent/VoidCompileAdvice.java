package dev.weft.tracer.agent;

import dev.weft.tracer.CompileGate;
import net.bytebuddy.asm.Advice;

/** Inlined into void {@code @Compile} methods: the body runs only while this thread is tracing. */
final class VoidCompileAdvice {
    private VoidCompileAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    static Object enter(@Advice.Origin Class<?> type, @Advice.Origin("#m#d") String signature,
                        @Advice.This(optional = true) Object receiver, @Advice.AllArguments Object[] args) {
        return CompileGate.enter(type, signature, receiver, args);
    }
}
