package dev.weft.tracer.agent;

import dev.weft.spi.Libc;
import dev.weft.spi.Preload;
import dev.weft.spi.RankClasses;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import net.bytebuddy.agent.ByteBuddyAgent;

/**
 * The Java agent that routes calls of {@code @Compile} methods through {@link dev.weft.tracer.CompileGate}.
 * Loaded with {@code -javaagent:} the {@code dev.weft:weft} (or {@code weft-tracer}) jar, or attached to the running
 * JVM by {@link #install()} (Byte Buddy's attacher). It registers {@link CompileTransformer}, which rejects a class
 * without {@code @Compile} methods by a byte search of its class file, and retransforms the already loaded classes
 * whose class files name the annotation, and the user's classes that fake ranks share (whose static writes it
 * watches, see {@link dev.weft.spi.SharedStatics}); neither change alters a class's shape.
 */
public final class WeftAgent {
    private static boolean installed;
    /** The compiler directives' reply, once the agent's thread has added them ({@link JitDirectives}). */
    private static CompletableFuture<String> directives;

    private WeftAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        // The program's first tensor needs these downcalls; linking them takes a fresh JVM ~0.1 s, done meanwhile
        // (an agent attached later is attached by that first tensor, or just before it).
        Preload.inBackground("weft-libc", Libc::link);
        install(inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
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
        install(ByteBuddyAgent.install());
        return true;
    }

    private static synchronized void install(Instrumentation inst) {
        if (installed) {
            return;
        }
        directives = JitDirectives.addInBackground(inst);
        // Which classes are the user's, worked out before the transformer asks during class loads.
        RankClasses.isSharedUserClass(null, null, "");
        // Registered first: a class loaded from now on is seen by the transformer, one loaded before is among the
        // loaded classes below (one loaded in between is both, and retransforming it again changes nothing).
        inst.addTransformer(new CompileTransformer(), true);
        List<Class<?>> gated = new ArrayList<>();
        for (Class<?> type : inst.getAllLoadedClasses()) {
            if (inst.isModifiableClass(type) && !type.isHidden() && !type.isArray()
                    && (RankClasses.isSharedUserClass(type.getClassLoader(), type.getProtectionDomain(),
                    type.getName()) || mayDeclareCompile(type))) {
                gated.add(type);
            }
        }
        if (!gated.isEmpty()) {
            try {
                inst.retransformClasses(gated.toArray(Class<?>[]::new));
            } catch (UnmodifiableClassException e) {
                throw new IllegalStateException(e);
            }
        }
        installed = true;
    }

    /** What adding the agent's compiler directives said, or why it failed; empty before the agent is installed. */
    static synchronized Optional<CompletableFuture<String>> compilerDirectives() {
        return Optional.ofNullable(directives);
    }

    /**
     * Whether a loaded class may have {@code @Compile} methods, from its class file (reflection would load the
     * classes its methods name); the JDK's own classes, hidden classes and arrays have none.
     */
    private static boolean mayDeclareCompile(Class<?> type) {
        ClassLoader loader = type.getClassLoader();
        if (loader == null || loader == ClassLoader.getPlatformClassLoader() || type.isHidden() || type.isArray()
                || type.isPrimitive()) {
            return false;
        }
        try (InputStream in = loader.getResourceAsStream(type.getName().replace('.', '/') + ".class")) {
            return in != null && CompileTransformer.mayDeclareCompile(in.readAllBytes());
        } catch (IOException e) {
            return false;
        }
    }
}
