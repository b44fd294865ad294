package dev.weft.spi;

import dev.weft.Compile;
import dev.weft.WeftException;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Installs the agent that routes {@code @Compile} calls to the compiler, once per JVM, when the first
 * {@link dev.weft.Tensor} or {@link dev.weft.comm.Comm} is made: a program that neither starts with
 * {@code -javaagent} nor calls {@code Weft.install()} still compiles its {@code @Compile} methods (the agent
 * retransforms the classes loaded before it). After that first time the check is one volatile read.
 *
 * <p>A {@code @Compile} method that was already running when the agent came (its own body made Weft's first
 * tensor) cannot be compiled any more: that is a {@link WeftException} at its line saying to install the agent
 * first; its later calls compile. If the agent cannot be attached (a JVM without {@code jdk.attach}, or with
 * {@code -XX:-EnableDynamicAgentLoading}), standard error says so once and {@code @Compile} methods run eagerly;
 * each such method is named once, on standard error, when it first runs.
 */
public final class AgentInstallation {
    /** Set once the installation has been tried; until then every thread goes through {@link #install}. */
    private static volatile boolean done;
    /** Set when a thread starts installing (guarded by the class lock; that thread may make tensors meanwhile). */
    private static boolean started;
    /** Why the agent is missing, when installing it failed (written before {@link #done}); else {@code null}. */
    private static String missing;

    private AgentInstallation() {
    }

    /**
     * Installs the agent unless that was tried already; other threads wait until it is in place. Without an agent,
     * names each {@code @Compile} method found running eagerly, once.
     */
    public static void ensure() {
        if (!done) {
            install();
        } else if (missing != null) {
            UncompiledCalls.check(missing);
        }
    }

    private static synchronized void install() {
        if (started) {
            return;
        }
        started = true;
        try {
            attach();
        } finally {
            done = true;
        }
    }

    private static void attach() {
        Optional<WeftRuntime> runtime = ServiceLoader.load(WeftRuntime.class).findFirst();
        if (runtime.isEmpty()) {
            return;
        }
        boolean installedNow;
        try {
            installedNow = runtime.get().install();
        } catch (RuntimeException | LinkageError e) {
            missing = String.valueOf(e.getMessage() != null ? e.getMessage() : e);
            System.err.println("weft: could not install the @Compile agent (" + missing + "); @Compile methods will"
                    + " run eagerly. Start the JVM with -javaagent:<the dev.weft:weft jar> (bin/weft does) to compile"
                    + " them.");
            return;
        }
        if (installedNow && !Interpreters.isTracing()) {
            StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                    .walk(frames -> frames.filter(AgentInstallation::isCompileMethod).findFirst())
                    .ifPresent(f -> {
                        throw new WeftException(SourceLocation.of(f), "@Compile method "
                                + f.getDeclaringClass().getSimpleName() + "." + f.getMethodName() + " started before"
                                + " Weft's agent was installed (its body made the program's first tensor), so this"
                                + " call cannot be compiled; call Weft.install() at the start of main, or start the"
                                + " JVM with -javaagent:<the dev.weft:weft jar> (bin/weft does). Later calls are"
                                + " compiled.");
                    });
        }
    }

    private static boolean isCompileMethod(StackWalker.StackFrame f) {
        try {
            return f.getDeclaringClass().getDeclaredMethod(f.getMethodName(), f.getMethodType().parameterArray())
                    .isAnnotationPresent(Compile.class);
        } catch (NoSuchMethodException e) {
            return false;
        }
    }
}
