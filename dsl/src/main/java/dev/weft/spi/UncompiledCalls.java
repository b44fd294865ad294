package dev.weft.spi;

import dev.weft.Compile;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Names, once each on standard error, the {@code @Compile} methods that run eagerly because Weft's agent could not
 * be installed, so that a program does not silently lose its compilation. Consulted for every tensor made while
 * the agent is missing (only then): a stack walk that skips classes without {@code @Compile} methods.
 */
final class UncompiledCalls {
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    private static final ClassValue<Boolean> HAS_COMPILE = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            try {
                return Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.isAnnotationPresent(Compile.class));
            } catch (LinkageError e) {
                return false;
            }
        }
    };
    private static final Set<Method> WARNED = ConcurrentHashMap.newKeySet();

    private UncompiledCalls() {
    }

    /** Warns about each {@code @Compile} method on the calling thread's stack not named before. */
    static void check(String why) {
        WALKER.forEach(f -> {
            if (HAS_COMPILE.get(f.getDeclaringClass())) {
                Method m = compileMethod(f);
                if (m != null && WARNED.add(m)) {
                    System.err.println("weft: @Compile method " + m.getDeclaringClass().getName() + "." + m.getName()
                            + " (" + SourceLocation.of(f) + ") runs eagerly on every call: Weft's agent is not"
                            + " installed (" + why + "). Start the JVM with -javaagent:<the dev.weft:weft jar>, or"
                            + " allow Weft to attach it (-XX:+EnableDynamicAgentLoading, a JDK with jdk.attach).");
                }
            }
        });
    }

    private static Method compileMethod(StackWalker.StackFrame f) {
        try {
            Method m = f.getDeclaringClass().getDeclaredMethod(f.getMethodName(),
                    f.getMethodType().parameterArray());
            return m.isAnnotationPresent(Compile.class) ? m : null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
