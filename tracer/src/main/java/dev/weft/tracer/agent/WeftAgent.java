package dev.weft.tracer.agent;

import static net.bytebuddy.matcher.ElementMatchers.declaresMethod;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isAnnotatedWith;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;

import dev.weft.Compile;
import java.lang.instrument.Instrumentation;
import net.bytebuddy.agent.ByteBuddyAgent;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The Java agent that routes calls of {@code @Compile} methods through {@link dev.weft.tracer.CompileGate}.
 * Loaded with {@code -javaagent:} the {@code dev.weft:weft} (or {@code weft-tracer}) jar, Byte Buddy on the class path,, or attached to the running JVM
 * by {@link #install()}. Classes loaded before installation are retransformed; the advice is inlined and
 * changes no class shape.
 */
public final class WeftAgent {
    private static boolean installed;

    private WeftAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        avoidUnsafe();
        install(inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        avoidUnsafe();
        install(inst);
    }

    /**
     * Attaches the agent to this JVM unless it is already installed (needs {@code -XX:+EnableDynamicAgentLoading}
     * on JDK 21 and later to run without a warning).
     *
     * @return whether this call installed it
     */
    public static synchronized boolean install() {
        if (installed) {
            return false;
        }
        avoidUnsafe();
        install(ByteBuddyAgent.install());
        return true;
    }

    /**
     * Byte Buddy's safe mode, unless the user chose: without it Byte Buddy calls {@code sun.misc.Unsafe}, which
     * JDK 25 warns about on stderr. Read when Byte Buddy's class injector initialises, so set before any use.
     */
    private static void avoidUnsafe() {
        if (System.getProperty("net.bytebuddy.safe") == null) {
            System.setProperty("net.bytebuddy.safe", "true");
        }
    }

    private static synchronized void install(Instrumentation inst) {
        if (installed) {
            return;
        }
        ElementMatcher.Junction<MethodDescription> compiled = isAnnotatedWith(Compile.class)
                .and(not(isAbstract()));
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                // Reflecting on a loaded class while retransforming loads the classes its methods name; one loaded
                // then (inside Byte Buddy's circularity lock) is not transformed, nor among the classes found, so
                // look for loaded classes again until no new one appears. Cheaper than describing every loaded
                // class from its class file (POOL_FIRST: +60 MiB resident in DroppedTensorsTest).
                .with(AgentBuilder.RedefinitionStrategy.DiscoveryStrategy.Reiterating.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .ignore(nameStartsWith("net.bytebuddy.").or(nameStartsWith("java.")).or(nameStartsWith("jdk."))
                        .or(nameStartsWith("sun.")).or(isSynthetic()))
                .type(declaresMethod(compiled))
                .transform((builder, type, loader, module, domain) -> builder
                        .visit(Advice.to(CompileAdvice.class).on(compiled.and(not(returns(void.class)))))
                        .visit(Advice.to(VoidCompileAdvice.class).on(compiled.and(returns(void.class)))))
                .installOn(inst);
        installed = true;
    }
}
