package dev.weft.testing;

import dev.weft.comm.Comm;
import dev.weft.spi.RankClasses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/**
 * The JUnit 5 extension behind {@link Ranks} (which registers it): one test template invocation per rank count,
 * whose method call is replaced by running the method on that many fake ranks through {@link RankRunner}. A
 * parameter of type {@code Comm} receives each rank's world. {@code @BeforeEach}/{@code @AfterEach} methods run
 * once per invocation on the test thread, not on the ranks.
 *
 * <p>Each rank runs the method on its own copy of the test class and of the user's classes it reaches
 * ({@link RankClasses}: the classes of the class path's directories, such as {@code target/classes} and
 * {@code target/test-classes}, loaded once per rank), on a new instance of that copy made with its constructor
 * without parameters. So each rank has its own static fields, as each process has under {@code mpirun}, and starts
 * with fresh ones. Weft's classes, the JDK's, JUnit's and AssertJ's are shared, so tensors, communicators and
 * assertion errors cross. The copy's instance is not JUnit's: it gets the fields {@code @BeforeEach} methods set
 * on JUnit's where their values are primitives or of shared classes (a {@code Tensor}, an array, a string), not
 * those holding the user's own objects, nor statics set by {@code @BeforeAll}: set such state up in the method or
 * in field initialisers. The ranks share JUnit's class instead (and the agent reports a static field written on two ranks,
 * see {@link dev.weft.spi.SharedStatics}) when it cannot be copied: a class in one of Weft's packages, one not
 * loaded from the class path, an inner ({@code @Nested}) class or one without a constructor without parameters,
 * and a method taking parameters of the user's own types.
 */
public final class RanksExtension implements TestTemplateInvocationContextProvider {
    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return context.getTestMethod().map(m -> m.isAnnotationPresent(Ranks.class)).orElse(false);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        int[] counts = context.getRequiredTestMethod().getAnnotation(Ranks.class).value();
        return Arrays.stream(counts).mapToObj(RankCount::new);
    }

    /** One invocation: the method body on {@code n} ranks. */
    private record RankCount(int n) implements TestTemplateInvocationContext {
        @Override
        public String getDisplayName(int invocationIndex) {
            return n + (n == 1 ? " rank" : " ranks");
        }

        @Override
        public List<Extension> getAdditionalExtensions() {
            return List.of(new CommParameter(), new OnRanks(n));
        }
    }

    /** Resolves a {@code Comm} parameter to a placeholder; {@link OnRanks} passes each rank its own world. */
    private static final class CommParameter implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext p, ExtensionContext context) {
            return p.getParameter().getType() == Comm.class;
        }

        @Override
        public Object resolveParameter(ParameterContext p, ExtensionContext context) {
            return null;
        }
    }

    /**
     * Replaces the method call with one call per fake rank, on the rank's own copy of the test class when it can be
     * copied ({@link RankClasses#of}).
     */
    private record OnRanks(int n) implements InvocationInterceptor {
        @Override
        public void interceptTestTemplateMethod(Invocation<Void> invocation,
                ReflectiveInvocationContext<Method> call, ExtensionContext context) {
            invocation.skip();
            Method m = call.getExecutable();
            m.setAccessible(true);
            Object target = call.getTarget().orElse(null);
            List<Object> template = call.getArguments();
            RankClasses classes = RankClasses.of(context.getRequiredTestClass());
            URLClassLoader[] loaders = new URLClassLoader[n];
            try {
                RankRunner.run(n, world -> {
                    Object[] args = template.toArray();
                    Class<?>[] types = m.getParameterTypes();
                    for (int i = 0; i < args.length; i++) {
                        if (types[i] == Comm.class) {
                            args[i] = world;
                        }
                    }
                    Method method = m;
                    Object on = target;
                    if (classes != null) {
                        loaders[world.rank()] = classes.loader();
                        Thread.currentThread().setContextClassLoader(loaders[world.rank()]);
                        Copy copy = Copy.of(m, context.getRequiredTestClass(), loaders[world.rank()], target);
                        if (copy != null) {
                            method = copy.method();
                            on = copy.target();
                        }
                    }
                    try {
                        method.invoke(on, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
            } finally {
                for (URLClassLoader l : loaders) {
                    if (l != null) {
                        try {
                            l.close();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                }
            }
        }
    }

    /** The test method on a rank's copy of the test class, and the instance of that copy to call it on. */
    private record Copy(Method method, Object target) {
        /**
         * The copy of {@code m} in {@code loader}'s copy of {@code testClass}, on a new instance of that copy (made
         * with its constructor without parameters, then given {@code junits}'s fields: see {@link #fieldsOf}) for an
         * instance method; {@code null} when that cannot be, as for a method whose parameter types are the user's
         * classes or an inner class's: the ranks then share the class.
         */
        static Copy of(Method m, Class<?> testClass, ClassLoader loader, Object junits)
                throws ReflectiveOperationException {
            Class<?> copy = Class.forName(testClass.getName(), true, loader);
            Class<?> declaring = Class.forName(m.getDeclaringClass().getName(), false, loader);
            Method method;
            Constructor<?> make = null;
            try {
                method = declaring.getDeclaredMethod(m.getName(), m.getParameterTypes());
                if (!Modifier.isStatic(method.getModifiers())) {
                    make = copy.getDeclaredConstructor();
                }
            } catch (NoSuchMethodException e) {
                return null;
            }
            method.setAccessible(true);
            if (make == null) {
                return new Copy(method, null);
            }
            make.setAccessible(true);
            Object instance = make.newInstance();
            if (junits != null) {
                fieldsOf(junits, instance);
            }
            return new Copy(method, instance);
        }

        /**
         * Gives {@code to}, a rank's instance, the non-final instance fields of {@code from}, JUnit's (as its
         * {@code @BeforeEach} methods set them), whose values the copy can hold: primitives and values of shared
         * classes (the JDK's, Weft's: a {@code Tensor}, an array, a string). A value of the user's own classes stays
         * the copy's own, as its initialiser made it.
         */
        private static void fieldsOf(Object from, Object to) throws ReflectiveOperationException {
            Class<?> d = to.getClass();
            for (Class<?> c = from.getClass(); c != null && d != null && c != Object.class;
                    c = c.getSuperclass(), d = d.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) || Modifier.isFinal(f.getModifiers())) {
                        continue;
                    }
                    f.setAccessible(true);
                    Object v = f.get(from);
                    Field g = d.getDeclaredField(f.getName());
                    if (v != null && (g.getType().isPrimitive() || g.getType().isInstance(v))) {
                        g.setAccessible(true);
                        g.set(to, v);
                    }
                }
            }
        }
    }
}
